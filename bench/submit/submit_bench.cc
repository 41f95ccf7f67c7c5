// Acknowledged job submits per second through the HTTP API.
//
// N client threads, each with one keep-alive connection, POST /v1/jobs as
// fast as the server answers; a request counts only when it gets 201 (the job
// is durably committed). Reports throughput and p50/p99 latency.
//
//   submit_bench --port P[,P2...] --token T [--clients 16] [--seconds 10] [--warmup 2]
//
// With --get PATH it is a plain load generator instead: GET PATH, counted
// when it gets 200, no token (bench/service drives a proxy with it).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<int> ports;  // clients are spread over these servers (replicas), round robin
  std::string token;
  std::string get;  // a GET of this path instead of submits
  int clients = 16;
  double seconds = 10;
  double warmup = 2;
};

int Connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("connect");
    std::exit(1);
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// Reads one HTTP response; returns its status code, or -1 on error.
int ReadResponse(int fd, std::string& buf) {
  for (;;) {
    size_t end = buf.find("\r\n\r\n");
    if (end != std::string::npos) {
      int status = std::atoi(buf.c_str() + 9);
      size_t cl = 0;
      auto pos = buf.find("Content-Length: ");
      if (pos == std::string::npos) pos = buf.find("content-length: ");
      if (pos != std::string::npos && pos < end) cl = std::strtoul(buf.c_str() + pos + 16, nullptr, 10);
      size_t total = end + 4 + cl;
      while (buf.size() < total) {
        char tmp[16384];
        ssize_t n = ::read(fd, tmp, sizeof tmp);
        if (n <= 0) return -1;
        buf.append(tmp, static_cast<size_t>(n));
      }
      buf.erase(0, total);
      return status;
    }
    char tmp[16384];
    ssize_t n = ::read(fd, tmp, sizeof tmp);
    if (n <= 0) return -1;
    buf.append(tmp, static_cast<size_t>(n));
  }
}

struct ClientResult {
  uint64_t acked = 0;
  uint64_t errors = 0;
  std::vector<uint32_t> latencies_us;  // measured requests only
};

void RunClient(const Options& o, int id, Clock::time_point measure_from, Clock::time_point stop, ClientResult& out) {
  int port = o.ports[static_cast<size_t>(id) % o.ports.size()];
  int fd = Connect(port);
  const std::string body =
      "{\"spec\":\"name: bench\\nresources:\\n  accelerators: H200:8\\n  labels: {owner: bench@example.com, team: nlp}\\n"
      "run: python train.py\\n\"}";
  std::string buf;
  out.latencies_us.reserve(200000);
  for (uint64_t i = 0;; ++i) {
    auto start = Clock::now();
    if (start >= stop) break;
    std::string req = !o.get.empty()
                          ? "GET " + o.get + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                          : "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + o.token +
                                "\r\nContent-Type: application/json\r\nIdempotency-Key: bench-" + std::to_string(id) +
                                "-" + std::to_string(i) + "\r\nContent-Length: " + std::to_string(body.size()) +
                                "\r\n\r\n" + body;
    if (::write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
      ++out.errors;
      break;
    }
    int status = ReadResponse(fd, buf);
    auto end = Clock::now();
    if (start < measure_from) continue;  // warm-up
    if (status == (o.get.empty() ? 201 : 200)) {
      ++out.acked;
      out.latencies_us.push_back(
          static_cast<uint32_t>(std::chrono::duration_cast<std::chrono::microseconds>(end - start).count()));
    } else {
      ++out.errors;
      if (status < 0) break;
    }
  }
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--port") {
      // One port, or several separated by commas (replicas on one database).
      for (size_t at = 0; at <= v.size();) {
        size_t comma = v.find(',', at);
        if (comma == std::string::npos) comma = v.size();
        o.ports.push_back(std::atoi(v.substr(at, comma - at).c_str()));
        at = comma + 1;
      }
    }
    else if (k == "--token") o.token = v;
    else if (k == "--get") o.get = v;
    else if (k == "--clients") o.clients = std::atoi(v.c_str());
    else if (k == "--seconds") o.seconds = std::atof(v.c_str());
    else if (k == "--warmup") o.warmup = std::atof(v.c_str());
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  bool bad_port = o.ports.empty();
  for (int p : o.ports) bad_port = bad_port || p <= 0;
  if (bad_port || (o.token.empty() && o.get.empty())) {
    std::fprintf(stderr, "usage: submit_bench --port P[,P2...] (--token T | --get PATH) [--clients 16] [--seconds 10] [--warmup 2]\n");
    return 2;
  }
  auto begin = Clock::now();
  auto measure_from = begin + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.warmup));
  auto stop = measure_from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  std::vector<ClientResult> results(o.clients);
  std::vector<std::thread> threads;
  for (int c = 0; c < o.clients; ++c) {
    threads.emplace_back([&, c] { RunClient(o, c, measure_from, stop, results[c]); });
  }
  for (auto& t : threads) t.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - measure_from).count();

  uint64_t acked = 0, errors = 0;
  std::vector<uint32_t> all;
  for (auto& r : results) {
    acked += r.acked;
    errors += r.errors;
    all.insert(all.end(), r.latencies_us.begin(), r.latencies_us.end());
  }
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) { return all.empty() ? 0.0 : all[std::min(all.size() - 1, size_t(p * all.size()))] / 1000.0; };
  double rate = acked / elapsed;
  std::printf("{\"clients\": %d, \"seconds\": %.1f, \"acked\": %llu, \"errors\": %llu, \"submits_per_s\": %.0f, "
              "\"p50_ms\": %.3f, \"p99_ms\": %.3f}\n",
              o.clients, elapsed, static_cast<unsigned long long>(acked), static_cast<unsigned long long>(errors), rate,
              pct(0.50), pct(0.99));
  return errors == 0 ? 0 : 1;
}
