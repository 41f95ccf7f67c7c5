// Sealing jobs' secrets: a real AES-256-GCM round trip, bound to its job,
// refused under another key or when altered, and a key file made once.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "identity/secret_box.h"

namespace causeway::identity {
namespace {

SecretBox Box(char fill) { return *SecretBox::FromKey(std::string(32, fill)); }

TEST(SecretBoxTest, OpensWhatItSealedForTheSameJobOnly) {
  SecretBox box = Box('k');
  std::string sealed = box.Seal(R"({"HF_TOKEN":"hf_abc"})", "job_1");
  EXPECT_EQ(sealed.find("hf_abc"), std::string::npos);
  EXPECT_EQ(sealed.rfind("v1:" + box.key_id() + ":", 0), 0u) << sealed;
  EXPECT_NE(box.Seal("same", "job_1"), box.Seal("same", "job_1")) << "a fresh nonce each time";
  auto opened = box.Open(sealed, "job_1");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(*opened, R"({"HF_TOKEN":"hf_abc"})");

  EXPECT_FALSE(box.Open(sealed, "job_2").ok()) << "moved onto another job";
  std::string altered = sealed;
  altered[altered.size() - 40] = altered[altered.size() - 40] == '0' ? '1' : '0';
  EXPECT_FALSE(box.Open(altered, "job_1").ok());
  auto other = Box('o').Open(sealed, "job_1");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find(box.key_id()), std::string::npos) << other.status().message();
  EXPECT_FALSE(box.Open("garbage", "job_1").ok());
  EXPECT_FALSE(SecretBox::FromKey("short").ok());
}

TEST(SecretBoxTest, MacsDependOnTheKey) {
  EXPECT_EQ(Box('a').Mac("x"), Box('a').Mac("x"));
  EXPECT_NE(Box('a').Mac("x"), Box('b').Mac("x"));
  EXPECT_NE(Box('a').Mac("x"), Box('a').Mac("y"));
}

TEST(SecretBoxTest, KeyFileIsMadeOncePrivatelyAndRefusedWhenDamaged) {
  std::string dir = std::filesystem::temp_directory_path() / ("secret_box_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = dir + "/secrets.key";
  auto first = SecretBox::OpenOrCreate(path);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto again = SecretBox::OpenOrCreate(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->key_id(), first->key_id());
  EXPECT_TRUE(again->Open(first->Seal("v", "j"), "j").ok());

  ::chmod(path.c_str(), 0644);
  auto shared = SecretBox::OpenOrCreate(path);
  ASSERT_FALSE(shared.ok()) << "a key others may read is refused";
  EXPECT_NE(shared.status().message().find("chmod 600"), std::string::npos);
  ::chmod(path.c_str(), 0600);

  std::ofstream(path, std::ios::trunc) << "not a key\n";
  auto bad = SecretBox::OpenOrCreate(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("64 hex digits"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace causeway::identity
