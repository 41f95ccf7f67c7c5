// BulkFile (the CLI's writer of large outputs): whatever the sizes written,
// across 4 MiB blocks and the unaligned tail, the file holds exactly the
// bytes, in order.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "cli/bulk_file.h"

namespace causeway::cli {
namespace {

TEST(BulkFileTest, HoldsExactlyWhatWasWrittenAcrossBlocksAndTheTail) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("cw-bulk-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::mt19937 rng(3);
  for (size_t total : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{(4u << 20) - 1}, size_t{(4u << 20) + 4097},
                       size_t{13u << 20}}) {
    std::string path = (dir / ("out-" + std::to_string(total))).string();
    auto out = BulkFile::Create(path);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    std::string expected;
    expected.reserve(total);
    while (expected.size() < total) {
      size_t n = std::min(total - expected.size(), static_cast<size_t>(rng() % 3000));
      std::string piece(n, '\0');
      for (char& c : piece) c = static_cast<char>('a' + rng() % 26);
      (*out)->Write(piece);
      expected += piece;
    }
    ASSERT_TRUE((*out)->Close().ok());
    std::ifstream in(path, std::ios::binary);
    std::string got((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(got.size(), expected.size());
    EXPECT_TRUE(got == expected) << total;
  }
  auto bad = BulkFile::Create((dir / "no-such-dir" / "x").string());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace causeway::cli
