// --env-file as dotenv files are written, and --env/--secret KEY taken
// from the environment.
#include <gtest/gtest.h>

#include <cstdlib>

#include "cli/spec_inputs.h"

namespace causeway::cli {
namespace {

TEST(SpecInputsFlagsTest, ReadsDotenvFiles) {
  auto vars = ParseEnvFile(
      "# settings\n\nMODE=fast\nexport LR = 1e-4\nQUOTED=\"a # not a comment\\n\"\nSINGLE='$HOME stays'\n"
      "TRAILING=value # a comment\nEMPTY=\n",
      "my.env");
  ASSERT_TRUE(vars.ok()) << vars.status().ToString();
  EXPECT_EQ(*vars, (std::map<std::string, std::string>{{"MODE", "fast"},
                                                       {"LR", "1e-4"},
                                                       {"QUOTED", "a # not a comment\n"},
                                                       {"SINGLE", "$HOME stays"},
                                                       {"TRAILING", "value"},
                                                       {"EMPTY", ""}}));
  auto bad = ParseEnvFile("A=1\nno equals sign\n", "my.env");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("my.env:2: expected KEY=VALUE"), std::string::npos);
  auto open = ParseEnvFile("TOKEN=\"secret-value\n", "my.env");
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.status().message().find("secret-value"), std::string::npos) << "no value in the message";
}

TEST(SpecInputsFlagsTest, KeyAloneIsTakenFromTheEnvironment) {
  ::setenv("CW_TEST_FROM_ENV", "from-env", 1);
  ::unsetenv("CW_TEST_UNSET");
  SpecInputFlags flags;
  flags.envs = {"A=1", "B=x=y", "CW_TEST_FROM_ENV"};
  flags.secrets = {"CW_TEST_FROM_ENV"};
  auto in = ReadSpecInputs(flags);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  EXPECT_EQ(in->envs.at("B"), "x=y");
  EXPECT_EQ(in->envs.at("CW_TEST_FROM_ENV"), "from-env");
  EXPECT_EQ(in->secrets.at("CW_TEST_FROM_ENV"), "from-env");
  flags.secrets = {"CW_TEST_UNSET"};
  auto missing = ReadSpecInputs(flags);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--secret CW_TEST_UNSET"), std::string::npos);
}

}  // namespace
}  // namespace causeway::cli
