// DSSE envelopes: the encoding the specification gives, a signature any
// ECDSA verifier accepts (the openssl command, which shares no code with
// Causeway's reading of the envelope), and every tampering refused.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "provenance/dsse.h"

namespace causeway::provenance {
namespace {

using nlohmann::json;
namespace jwt = identity::jwt;

jwt::KeySet KeysOf(const jwt::SigningKey& key) {
  auto k = jwt::PublicKey::FromJwk(key.PublicJwk());
  EXPECT_TRUE(k.ok()) << k.status().ToString();
  jwt::KeySet set;
  set.Add(std::move(*k));
  return set;
}

TEST(DsseTest, PreAuthenticationEncodingIsTheSpecifications) {
  // The example of DSSE's protocol description.
  EXPECT_EQ(Pae("http://example.com/HelloWorld", "hello world"),
            "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  EXPECT_EQ(Pae("", ""), "DSSEv1 0  0 ");
  // Lengths are of bytes, not characters.
  EXPECT_EQ(Pae("t", "\xc3\xa9"), "DSSEv1 1 t 2 \xc3\xa9");
}

TEST(DsseTest, ASignedEnvelopeVerifiesAndEveryTamperingIsRefused) {
  auto key = jwt::SigningKey::Generate(jwt::Alg::kES256, "prov-1");
  ASSERT_TRUE(key.ok());
  std::string statement = R"({"_type":"https://in-toto.io/Statement/v1","subject":[]})";
  auto envelope = Sign(kInTotoPayloadType, statement, *key);
  ASSERT_TRUE(envelope.ok()) << envelope.status().ToString();
  EXPECT_EQ((*envelope)["payloadType"], kInTotoPayloadType);
  EXPECT_EQ((*envelope)["signatures"][0]["keyid"], "prov-1");
  jwt::KeySet keys = KeysOf(*key);
  auto payload = Verify(*envelope, kInTotoPayloadType, keys);
  ASSERT_TRUE(payload.ok()) << payload.status().ToString();
  EXPECT_EQ(*payload, statement);
  // Re-serialized (keys reordered, spaces added): still the same record.
  auto again = Verify(json::parse(envelope->dump(2)), kInTotoPayloadType, keys);
  EXPECT_TRUE(again.ok());

  auto refused = [&](json e, Code code) {
    auto r = Verify(e, kInTotoPayloadType, keys);
    ASSERT_FALSE(r.ok()) << e.dump();
    EXPECT_EQ(r.status().code(), code) << r.status().ToString();
  };
  json t = *envelope;
  t["payload"] = "eyJfdHlwZSI6ImZvcmdlZCJ9";  // another statement
  refused(t, Code::kPermissionDenied);
  t = *envelope;
  t["payloadType"] = "application/json";
  refused(t, Code::kInvalidArgument);
  t = *envelope;
  std::string sig = t["signatures"][0]["sig"];
  sig[10] = sig[10] == 'A' ? 'B' : 'A';
  t["signatures"][0]["sig"] = sig;
  refused(t, Code::kPermissionDenied);
  t = *envelope;
  t["signatures"][0]["keyid"] = "someone-else";
  refused(t, Code::kPermissionDenied);
  auto other = jwt::SigningKey::Generate(jwt::Alg::kES256, "prov-1");
  ASSERT_TRUE(other.ok());
  auto forged = Sign(kInTotoPayloadType, statement, *other);
  ASSERT_TRUE(forged.ok());
  refused(*forged, Code::kPermissionDenied);
  refused(json::array(), Code::kInvalidArgument);
  t = *envelope;
  t["signatures"] = json::array();
  refused(t, Code::kInvalidArgument);
  t = *envelope;
  t["payload"] = "%%%";
  refused(t, Code::kInvalidArgument);
  t = *envelope;
  t["payload"] = std::string(kMaxPayloadBytes / 3 * 4 + 8, 'A');
  refused(t, Code::kInvalidArgument);
}

TEST(DsseTest, TheSignatureIsOneAnyEcdsaVerifierAccepts) {
  if (std::system("command -v openssl > /dev/null 2>&1") != 0) GTEST_SKIP() << "the openssl command is not installed";
  auto key = jwt::SigningKey::Generate(jwt::Alg::kES256, "prov-1");
  ASSERT_TRUE(key.ok());
  std::string body = "{\"subject\":[{\"name\":\"ckpt\",\"digest\":{\"sha256\":\"00\"}}]}";
  auto envelope = Sign(kInTotoPayloadType, body, *key);
  ASSERT_TRUE(envelope.ok());
  // The signature, decoded with the command's own base64, over PAE.
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("dsse-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "key.pem") << key->Pem();
  std::ofstream(dir / "pae.bin", std::ios::binary) << Pae(kInTotoPayloadType, body);
  std::ofstream(dir / "sig.b64") << (*envelope)["signatures"][0]["sig"].get<std::string>() << "\n";
  std::string d = dir.string();
  std::string cmd = "cd " + d + " && openssl base64 -d -A -in sig.b64 -out sig.der && "
                    "openssl pkey -in key.pem -pubout -out pub.pem 2>/dev/null && "
                    "openssl dgst -sha256 -verify pub.pem -signature sig.der pae.bin > out.txt 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << std::ifstream(dir / "out.txt").rdbuf();
  // And refuses it over anything else.
  std::ofstream(dir / "pae.bin", std::ios::binary) << Pae(kInTotoPayloadType, body + " ");
  EXPECT_NE(std::system(cmd.c_str()), 0);
  std::filesystem::remove_all(dir);
}

// The text bulk export streams is the same envelope: the same fields in
// the same order, standard base64 of every length, and it verifies.
TEST(DsseTest, TheEnvelopeWrittenAsTextIsTheSameEnvelope) {
  auto key = jwt::SigningKey::Generate(jwt::Alg::kES256, "prov-\"1");
  ASSERT_TRUE(key.ok());
  for (std::string payload : {"", "a", "ab", "abc", "abcd", "{\"_type\":\"x\",\"n\":\"\xc3\xa9\\u0001\"}"}) {
    auto text = SignToText(kInTotoPayloadType, payload, *key);
    ASSERT_TRUE(text.ok());
    json parsed = json::parse(*text);
    auto signed_json = Sign(kInTotoPayloadType, payload, *key);
    ASSERT_TRUE(signed_json.ok());
    EXPECT_EQ(parsed["payload"], (*signed_json)["payload"]) << payload;
    EXPECT_EQ(parsed["payloadType"], (*signed_json)["payloadType"]);
    EXPECT_EQ(parsed["signatures"][0]["keyid"], "prov-\"1");
    // Only the (randomized) signature differs: the same keys, in order.
    parsed["signatures"][0]["sig"] = (*signed_json)["signatures"][0]["sig"];
    EXPECT_EQ(parsed.dump(), signed_json->dump());
    auto back = Verify(json::parse(*text), kInTotoPayloadType, KeysOf(*key));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, payload);
  }
}

}  // namespace
}  // namespace causeway::provenance
