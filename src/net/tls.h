// TLS for Causeway's clients (fetching an IdP's keys, webhooks, syslog):
// the server's certificate is checked against the system's CAs (plus an
// extra CA file where one is given) and its name is checked and sent (SNI).
// There is no way to turn the checks off.
#pragma once

#include <string>

#include <boost/asio/ssl.hpp>

#include "causeway/status.h"

namespace causeway::net {

// Sets `ctx` up to verify servers. kUnavailable when the system's CAs
// cannot be loaded, kInvalidArgument when `extra_ca_file` cannot.
inline Status ConfigureTlsClient(boost::asio::ssl::context& ctx, const std::string& extra_ca_file = "") {
  boost::system::error_code ec;
  ctx.set_default_verify_paths(ec);
  if (ec) return Unavailable("cannot load the system's CA certificates: " + ec.message());
  if (!extra_ca_file.empty()) {
    ctx.load_verify_file(extra_ca_file, ec);
    if (ec) return InvalidArgument("cannot read the CA file " + extra_ca_file + ": " + ec.message());
  }
  ctx.set_verify_mode(boost::asio::ssl::verify_peer);
  return Status::Ok();
}

// Makes `stream` (asio's or Beast's SSL stream) ask for `host` and accept
// only a certificate for it.
template <typename Stream>
Status ExpectServerName(Stream& stream, const std::string& host) {
  if (!SSL_set_tlsext_host_name(stream.native_handle(), host.c_str())) {
    return Unavailable("cannot set the TLS server name for " + host);
  }
  stream.set_verify_callback(boost::asio::ssl::host_name_verification(host));
  return Status::Ok();
}

}  // namespace causeway::net
