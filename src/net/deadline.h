// Asio operations with a deadline that really fires. Boost 1.81's blocking
// calls have no timeout (basic_stream.hpp: "Timeouts are not available when
// performing blocking calls"), so every outbound call in src/net runs its
// steps as asynchronous operations on a private io_context, bounded here.
// Internal to src/net and the audit sinks: it pulls in Asio.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <optional>

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>

namespace causeway::net {

// Starts one asynchronous operation with `start(handler)` and runs `ioc`
// until it completes or `deadline` passes. On the deadline `cancel` is
// called (it closes the socket), the aborted handlers are drained, and the
// result is boost::asio::error::timed_out. Otherwise the operation's error.
// `ioc` must have no other work.
//
// With `abandon`, the operation is also given up (as on the deadline, with
// boost::asio::error::operation_aborted) within a tenth of a second of
// `*abandon` becoming true: for a caller that must stop promptly (a
// watch's thread when its owner goes) however long the deadline.
template <typename Start>
boost::system::error_code RunUntil(boost::asio::io_context& ioc, std::chrono::steady_clock::time_point deadline,
                                   const std::function<void()>& cancel, Start&& start,
                                   const std::atomic<bool>* abandon = nullptr) {
  std::optional<boost::system::error_code> result;
  start([&result](const boost::system::error_code& ec, auto&&...) { result = ec; });
  ioc.restart();
  if (abandon == nullptr) {
    ioc.run_until(deadline);  // returns once the operation completed, or at the deadline
  } else {
    while (!result && !abandon->load() && std::chrono::steady_clock::now() < deadline) {
      ioc.run_until(std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(100)));
    }
  }
  if (result) return *result;
  const bool abandoned = abandon != nullptr && abandon->load();
  cancel();
  ioc.restart();
  ioc.run();  // the aborted operation's handler runs; nothing else is queued
  return abandoned ? boost::asio::error::operation_aborted : boost::asio::error::timed_out;
}

}  // namespace causeway::net
