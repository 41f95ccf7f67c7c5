#include "cli/bulk_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace causeway::cli {

namespace {
constexpr size_t kAlign = 4096;
constexpr size_t kBlocksInFlight = 3;
}  // namespace

Result<std::unique_ptr<BulkFile>> BulkFile::Create(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0644);
  bool direct = fd >= 0;
  if (fd < 0 && errno == EINVAL) fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return InvalidArgument("cannot write " + path + ": " + std::strerror(errno));
  return std::unique_ptr<BulkFile>(new BulkFile(path, fd, direct));
}

BulkFile::BulkFile(std::string path, int fd, bool direct) : path_(std::move(path)), fd_(fd), direct_(direct) {
  current_ = NewBlock();
  writer_ = std::thread([this] { Loop(); });
}

BulkFile::~BulkFile() {
  (void)Close();
  for (Block& b : free_) std::free(b.data);
}

BulkFile::Block BulkFile::NewBlock() {
  MutexLock lock(mu_);
  // At most a few blocks exist: wait for the writer to give one back.
  static_assert(kBlocksInFlight >= 2);
  while (free_.empty() && full_.size() + 1 >= kBlocksInFlight) cv_.Wait(mu_);
  if (!free_.empty()) {
    Block b = free_.front();
    free_.pop_front();
    b.size = 0;
    return b;
  }
  void* p = nullptr;
  if (posix_memalign(&p, kAlign, kBlock) != 0) std::abort();
  return Block{static_cast<char*>(p), 0};
}

void BulkFile::Write(std::string_view data) {
  while (!data.empty()) {
    size_t n = std::min(data.size(), kBlock - current_.size);
    std::memcpy(current_.data + current_.size, data.data(), n);
    current_.size += n;
    data.remove_prefix(n);
    if (current_.size == kBlock) {
      Hand(current_);
      current_ = NewBlock();
    }
  }
}

void BulkFile::Hand(Block b) {
  MutexLock lock(mu_);
  full_.push_back(b);
  cv_.NotifyAll();
}

Status BulkFile::WriteAll(const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EINVAL && direct_) {
      // Opened with O_DIRECT but refused on write (some file systems):
      // buffered from here on.
      ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_DIRECT);
      direct_ = false;
      continue;
    }
    if (w <= 0) return Unavailable("cannot write " + path_ + ": " + std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

void BulkFile::Loop() {
  for (;;) {
    Block b;
    bool failed = false;
    {
      MutexLock lock(mu_);
      while (full_.empty() && !closing_) cv_.Wait(mu_);
      if (full_.empty()) return;
      b = full_.front();
      full_.pop_front();
      failed = !error_.ok();
    }
    // Whole blocks only reach here, so O_DIRECT's alignment holds.
    Status st = failed ? Status::Ok() : WriteAll(b.data, b.size);
    MutexLock lock(mu_);
    if (!st.ok() && error_.ok()) error_ = st;
    free_.push_back(b);
    cv_.NotifyAll();
  }
}

Status BulkFile::Close() {
  if (fd_ < 0) {
    MutexLock lock(mu_);
    return error_;
  }
  {
    MutexLock lock(mu_);
    closing_ = true;
    cv_.NotifyAll();
  }
  writer_.join();
  // The last, partial block: its aligned part directly, the tail through
  // the page cache (O_DIRECT needs whole blocks).
  Status st;
  {
    MutexLock lock(mu_);  // the writer has stopped; taken for the analysis
    st = error_;
  }
  size_t aligned = direct_ ? current_.size / kAlign * kAlign : 0;
  if (st.ok() && aligned > 0) st = WriteAll(current_.data, aligned);
  if (st.ok() && current_.size > aligned) {
    if (direct_) ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_DIRECT);
    st = WriteAll(current_.data + aligned, current_.size - aligned);
  }
  std::free(current_.data);
  current_ = Block{};
  if (::close(fd_) != 0 && st.ok()) st = Unavailable("cannot write " + path_ + ": " + std::strerror(errno));
  fd_ = -1;
  MutexLock lock(mu_);
  error_ = st;
  return st;
}

}  // namespace causeway::cli
