// A TCP proxy on 127.0.0.1 in front of a real server that can be made to
// hang: frozen, it passes no more bytes either way and no new connection
// on, and holds every connection open without a word, as a server does
// that stops answering in the middle of its work. TLS passes through
// untouched (the server's certificate must name 127.0.0.1).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace causeway::testing {

class FreezingProxy {
 public:
  explicit FreezingProxy(uint16_t upstream) : upstream_(upstream) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = Loopback(0);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 64), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    accept_ = std::thread([this] { Accept(); });
  }
  ~FreezingProxy() {
    {
      std::lock_guard<std::mutex> lock(hold_mu_);
      stop_ = true;
    }
    held_.notify_all();
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    accept_.join();
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& t : pipes_) t.join();
  }
  uint16_t port() const { return port_; }
  // From now on nothing passes, and nothing is closed.
  void Freeze() { frozen_ = true; }

 private:
  static sockaddr_in Loopback(uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    return a;
  }
  void Accept() {
    while (!stop_) {
      int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0) break;
      std::lock_guard<std::mutex> lock(mu_);
      pipes_.emplace_back([this, client] { Pipe(client); });
    }
  }
  // Passes bytes between the client and a connection of its own to the
  // server until either closes, or holds both silent once frozen.
  void Pipe(int client) {
    int server = -1;
    if (!frozen_) {
      server = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a = Loopback(upstream_);
      if (::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(server);
        server = -1;
      }
    }
    char buf[16384];
    while (!stop_) {
      if (frozen_ || server < 0) {  // silent until the proxy goes
        std::unique_lock<std::mutex> lock(hold_mu_);
        held_.wait(lock, [this] { return stop_.load(); });
        break;
      }
      pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      if (::poll(fds, 2, 50) <= 0) continue;
      bool closed = false;
      for (int i = 0; i < 2 && !closed && !frozen_; ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
        if (n <= 0 || ::write(fds[1 - i].fd, buf, static_cast<size_t>(n)) != n) closed = true;
      }
      if (closed) break;
    }
    if (server >= 0) ::close(server);
    ::close(client);
  }

  uint16_t upstream_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false}, frozen_{false};
  std::mutex mu_;
  std::mutex hold_mu_;  // with held_: a silent connection waits for the proxy to go
  std::condition_variable held_;
  std::vector<std::thread> pipes_;
  std::thread accept_;
};

}  // namespace causeway::testing
