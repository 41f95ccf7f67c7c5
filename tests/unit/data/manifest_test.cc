#include "data/manifest.h"

#include <gtest/gtest.h>

#include "causeway/estate.h"
#include "data/rclone.h"

namespace causeway::data {
namespace {

const std::string kA(32, 'a'), kB(32, 'b'), kC(32, 'c');

Manifest Build(std::vector<ObjectEntry> objects) {
  ManifestBuilder b("md5");
  int i = 0;
  for (auto& o : objects) EXPECT_TRUE(b.Add(o.path, o.size, o.hash, "entry " + std::to_string(++i)).ok());
  auto m = std::move(b).Finish();
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return *m;
}

TEST(ManifestTest, TheSameObjectsInAnyOrderHaveOneDigest) {
  Manifest one = Build({{"train/b", 2, kB}, {"train/a", 1, kA}, {"val/c", 3, kC}});
  Manifest two = Build({{"val/c", 3, kC}, {"train/a", 1, kA}, {"train/b", 2, kB}});
  EXPECT_EQ(CanonicalText(one), CanonicalText(two));
  EXPECT_EQ(ManifestDigest(CanonicalText(one)), ManifestDigest(CanonicalText(two)));
  EXPECT_TRUE(IsDigest(ManifestDigest(CanonicalText(one))));
  EXPECT_EQ(one.bytes, 6);
  EXPECT_EQ(CanonicalText(one), "causeway-manifest 1 md5\n" + kA + " 1 train/a\n" + kB + " 2 train/b\n" + kC +
                                    " 3 val/c\n");
  // One byte of one object changes the digest.
  Manifest three = Build({{"train/b", 2, kB}, {"train/a", 1, kA}, {"val/c", 4, kC}});
  EXPECT_NE(ManifestDigest(CanonicalText(one)), ManifestDigest(CanonicalText(three)));
}

TEST(ManifestTest, PathsWithSpacesPercentAndNewlinesRoundTrip) {
  Manifest m = Build({{"a b/100%.txt", 1, kA}, {"line\nbreak", 2, kB}, {"tab\there", 3, kC}});
  std::string text = CanonicalText(m);
  EXPECT_NE(text.find("a%20b/100%25.txt"), std::string::npos) << text;
  EXPECT_NE(text.find("line%0Abreak"), std::string::npos) << text;
  auto back = ParseManifest(text, "m");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->objects.size(), 3u);
  EXPECT_EQ(CanonicalText(*back), text);
  EXPECT_EQ(back->objects[1].path, "line\nbreak");
}

TEST(ManifestTest, BadManifestsNameTheLineAndWhatWasExpected) {
  struct Case {
    std::string text, want;
  } cases[] = {
      {"", "m:1: expected the header"},
      {"causeway-manifest 1 crc32\n", "m:1: expected the header"},
      {"causeway-manifest 1 md5\n" + kA + " 12\n", "m:2: expected \"<hash> <size> <path>\""},
      {"causeway-manifest 1 md5\n" + kA + " 1x a\n", "m:2: expected a size in bytes"},
      {"causeway-manifest 1 md5\n" + kA + " -1 a\n", "m:2: a negative size"},
      {"causeway-manifest 1 md5\nzz 1 a\n", "m:2: object a has no md5 hash"},
      {"causeway-manifest 1 md5\n" + kA + " 1 ../etc/passwd\n", "m:2: a path with an empty"},
      {"causeway-manifest 1 md5\n" + kA + " 1 /abs\n", "m:2: an absolute path"},
      {"causeway-manifest 1 md5\n" + kA + " 1 a%2\n", "m:2: a path with a bad %-escape"},
      {"causeway-manifest 1 md5\n" + kA + " 1 a\n" + kB + " 2 a\n", "object a is listed twice"},
  };
  for (const auto& c : cases) {
    auto m = ParseManifest(c.text, "m");
    ASSERT_FALSE(m.ok()) << c.text;
    EXPECT_EQ(m.status().code(), Code::kInvalidArgument) << c.text;
    EXPECT_NE(m.status().message().find(c.want), std::string::npos) << m.status().message();
  }
}

TEST(ManifestTest, LimitsAreCheckedBeforeTheyAreReached) {
  ManifestLimits limits;
  limits.max_objects = 2;
  limits.max_path = 8;
  std::string text = "causeway-manifest 1 md5\n" + kA + " 1 a\n" + kB + " 1 b\n" + kC + " 1 c\n";
  auto m = ParseManifest(text, "m", limits);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), Code::kPayloadTooLarge);
  auto long_path = ParseManifest("causeway-manifest 1 md5\n" + kA + " 1 abcdefghij\n", "m", limits);
  ASSERT_FALSE(long_path.ok());
  EXPECT_NE(long_path.status().message().find("longer than 8 bytes"), std::string::npos);
}

TEST(ManifestTest, CompareFindsWhatIsMissingOrChangedAndIgnoresExtras) {
  Manifest want = Build({{"a", 1, kA}, {"b", 2, kB}, {"c", 3, kC}, {"d", 4, kA}});
  Manifest have = Build({{"a", 1, kA}, {"b", 2, kC}, {"d", 5, kA}, {"e", 9, kB}});
  ManifestDiff d = Compare(want, have);
  EXPECT_FALSE(d.Matches());
  EXPECT_EQ(d.missing, std::vector<std::string>{"c"});
  EXPECT_EQ(d.changed, (std::vector<std::string>{"b", "d"}));
  EXPECT_EQ(d.extra, 1);
  EXPECT_EQ(d.missing_bytes, 3);
  EXPECT_EQ(d.changed_bytes, 6);
  EXPECT_EQ(d.Describe(), "1 object missing (c), 2 changed (b, d)");
  EXPECT_TRUE(Compare(want, want).Matches());
  // An object listed without a hash cannot be checked, so it is not verified.
  Manifest nohash = want;
  nohash.objects[0].hash.clear();
  EXPECT_EQ(Compare(want, nohash).changed, std::vector<std::string>{"a"});
}

TEST(RcloneCsvTest, QuotedFieldsAndOpenQuotes) {
  auto f = SplitCsvRecord(R"("a,b ""q"".txt",3,764efa883dda1e11db47671c4a3bbd9e)");
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, (std::vector<std::string>{"a,b \"q\".txt", "3", "764efa883dda1e11db47671c4a3bbd9e"}));
  EXPECT_FALSE(SplitCsvRecord("\"line"));
  auto nl = SplitCsvRecord("\"line\nbreak\",1,x");
  ASSERT_TRUE(nl);
  EXPECT_EQ((*nl)[0], "line\nbreak");
}

TEST(TransferPriceTest, TheMostSpecificPriceWinsAndARegionIsFreeWithinItself) {
  DataConfig d;
  d.transfer_prices = {{"nebius", "*", Money(50'000, "USD"), "egress"},
                       {"nebius/eu-north1", "coreweave/us-east-04", Money(0, "USD"), "interconnect"},
                       {"*", "*", Money(90'000, "USD"), "egress"}};
  EXPECT_EQ(d.TransferPerGb("nebius/eu-north1", "gcp/us-central1", "USD")->micros(), 50'000);
  EXPECT_EQ(d.TransferPerGb("nebius/eu-north1", "coreweave/us-east-04", "USD")->micros(), 0);
  EXPECT_EQ(d.TransferPerGb("gcp/us-central1", "coreweave/us-east-04", "USD")->micros(), 90'000);
  EXPECT_EQ(d.TransferPerGb("gcp/us-central1", "gcp/us-central1", "USD")->micros(), 0);
  DataConfig none;
  EXPECT_FALSE(none.TransferPerGb("gcp/us-central1", "nebius/eu-north1", "USD"));
}

}  // namespace
}  // namespace causeway::data
