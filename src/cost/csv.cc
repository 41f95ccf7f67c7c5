#include "cost/csv.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "causeway/crypto.h"

namespace causeway::cost {
namespace {

constexpr size_t kBlockBytes = 4 << 20;
// Room kept in front of each block so the unfinished record of the
// previous block can be moved there instead of copying the new block.
constexpr size_t kHeadroom = 256 << 10;
constexpr size_t kBlocksInFlight = 3;

struct Block {
  std::unique_ptr<char[]> data{new char[kHeadroom + kBlockBytes]};
  size_t size = 0;  // bytes at data + kHeadroom
};

// Reads the file on its own thread: raw bytes → SHA-256 → gunzip → blocks
// for the parser, at most kBlocksInFlight ahead of it.
class BlockSource {
 public:
  BlockSource(int fd, bool gzip) : fd_(fd), gzip_(gzip) {
    for (size_t i = 0; i < kBlocksInFlight + 1; ++i) free_.push_back(std::make_unique<Block>());
    thread_ = std::thread([this] { Run(); });
  }
  ~BlockSource() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    ::close(fd_);
  }

  // The next block, or null at the end (then status() says whether the
  // file ended well).
  std::unique_ptr<Block> Take() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !full_.empty() || done_; });
    if (full_.empty()) return nullptr;
    auto b = std::move(full_.front());
    full_.pop_front();
    cv_.notify_all();
    return b;
  }
  void Give(std::unique_ptr<Block> b) {
    std::lock_guard lock(mu_);
    free_.push_back(std::move(b));
    cv_.notify_all();
  }
  Status status() {
    std::lock_guard lock(mu_);
    return status_;
  }
  std::string sha256() {
    std::lock_guard lock(mu_);
    return sha256_;
  }
  int64_t bytes() {
    std::lock_guard lock(mu_);
    return bytes_;
  }

 private:
  std::unique_ptr<Block> FreeBlock() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !free_.empty() || stop_; });
    if (stop_) return nullptr;
    auto b = std::move(free_.front());
    free_.pop_front();
    return b;
  }
  void Publish(std::unique_ptr<Block> b) {
    std::lock_guard lock(mu_);
    full_.push_back(std::move(b));
    cv_.notify_all();
  }
  void Finish(Status st, std::string digest, int64_t bytes) {
    std::lock_guard lock(mu_);
    status_ = std::move(st);
    sha256_ = std::move(digest);
    bytes_ = bytes;
    done_ = true;
    cv_.notify_all();
  }

  void Run() {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> md(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    EVP_DigestInit_ex(md.get(), EVP_sha256(), nullptr);
    z_stream z{};
    if (gzip_ && inflateInit2(&z, 15 + 32) != Z_OK) return Finish(Internal("zlib failed to start"), "", 0);
    std::unique_ptr<char[]> raw(gzip_ ? new char[kBlockBytes] : nullptr);
    int64_t total = 0;
    bool stream_end = false;
    Status st;
    while (!stream_end) {
      auto block = FreeBlock();
      if (!block) break;
      char* out = block->data.get() + kHeadroom;
      if (!gzip_) {
        ssize_t n = ::read(fd_, out, kBlockBytes);
        if (n < 0) {
          st = InvalidArgument(std::string("read failed: ") + std::strerror(errno));
          break;
        }
        EVP_DigestUpdate(md.get(), out, static_cast<size_t>(n));
        total += n;
        block->size = static_cast<size_t>(n);
        stream_end = n == 0;
      } else {
        z.next_out = reinterpret_cast<Bytef*>(out);
        z.avail_out = kBlockBytes;
        while (z.avail_out > 0 && !stream_end) {
          if (z.avail_in == 0) {
            ssize_t n = ::read(fd_, raw.get(), kBlockBytes);
            if (n < 0) {
              st = InvalidArgument(std::string("read failed: ") + std::strerror(errno));
              break;
            }
            if (n == 0) {
              st = InvalidArgument("the gzip stream ends early (truncated file?)");
              break;
            }
            EVP_DigestUpdate(md.get(), raw.get(), static_cast<size_t>(n));
            total += n;
            z.next_in = reinterpret_cast<Bytef*>(raw.get());
            z.avail_in = static_cast<uInt>(n);
          }
          int rc = inflate(&z, Z_NO_FLUSH);
          if (rc == Z_STREAM_END) {
            // Concatenated gzip members (as `cat a.gz b.gz`) are one file.
            if (z.avail_in > 0 || ReadAhead(raw.get(), z, md.get(), total)) {
              inflateReset(&z);
              continue;
            }
            stream_end = true;
          } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            st = InvalidArgument(std::string("not valid gzip data: ") + (z.msg ? z.msg : "inflate failed"));
            break;
          }
        }
        block->size = kBlockBytes - z.avail_out;
        if (!st.ok()) break;
      }
      if (block->size > 0) Publish(std::move(block));
      else Give(std::move(block));
    }
    if (gzip_) inflateEnd(&z);
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int len = 0;
    EVP_DigestFinal_ex(md.get(), digest.data(), &len);
    Finish(std::move(st), HexEncode(std::string_view(reinterpret_cast<char*>(digest.data()), len)), total);
  }

  // After one gzip member ends with no input left: reads on to see whether
  // another member follows.
  bool ReadAhead(char* raw, z_stream& z, EVP_MD_CTX* md, int64_t& total) {
    ssize_t n = ::read(fd_, raw, kBlockBytes);
    if (n <= 0) return false;
    EVP_DigestUpdate(md, raw, static_cast<size_t>(n));
    total += n;
    z.next_in = reinterpret_cast<Bytef*>(raw);
    z.avail_in = static_cast<uInt>(n);
    return true;
  }

  int fd_;
  bool gzip_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Block>> free_, full_;
  bool stop_ = false, done_ = false;
  Status status_;
  std::string sha256_;
  int64_t bytes_ = 0;
};

// Characters that end an unquoted field.
constexpr std::array<bool, 256> kFieldEnd = [] {
  std::array<bool, 256> t{};
  t[','] = t['\n'] = t['\r'] = true;
  return t;
}();

class FileCsvReader final : public CsvReader {
 public:
  FileCsvReader(std::string file, int fd, bool gzip) : file_(std::move(file)), source_(fd, gzip) {}

  Result<bool> Next(std::vector<CsvField>& fields) override {
    while (true) {
      size_t end = 0;
      int lines = 0;
      ASSIGN_OR_RETURN(bool complete, ParseRecord(fields, end, lines));
      if (complete) {
        line_ = next_line_;
        next_line_ += lines;
        pos_ = end;
        // A line with nothing on it is not a record.
        if (fields.size() == 1 && fields[0].text.empty() && !fields[0].quoted) continue;
        return true;
      }
      if (!Refill()) {
        RETURN_IF_ERROR(source_.status().WithPrefix(file_));
        if (pos_ >= size_) return false;
        // The last record has no line break after it.
        eof_ = true;
      }
    }
  }

  int64_t line() const override { return line_; }
  std::string sha256() const override { return source_.sha256(); }
  int64_t bytes_read() const override { return source_.bytes(); }

 private:
  // Parses the record at pos_. False when the buffer ends before the record
  // does (unless at the end of the file).
  Result<bool> ParseRecord(std::vector<CsvField>& fields, size_t& end, int& lines) {
    fields.clear();
    escaped_.clear();
    char* p = buf_ + pos_;
    char* const limit = buf_ + size_;
    lines = 0;
    if (next_line_ == 1 && pos_ == 0 && size_ >= 3 && std::memcmp(p, "\xEF\xBB\xBF", 3) == 0) {
      pos_ = 3;
      p += 3;
    }
    while (true) {
      if (p < limit && *p == '"') {
        // Only find the closing quote here: the buffer is not changed until
        // the whole record is in it, as it may be parsed again after a
        // refill.
        char* start = ++p;
        bool escaped = false;
        while (true) {
          char* q = static_cast<char*>(std::memchr(p, '"', static_cast<size_t>(limit - p)));
          if (!q) {
            if (eof_) return Invalid("a quoted field is not closed before the end of the file");
            return false;
          }
          if (q + 1 >= limit && !eof_) return false;
          if (q + 1 < limit && q[1] == '"') {
            escaped = true;
            p = q + 2;
            continue;
          }
          for (char* c = start; c < q; ++c) lines += *c == '\n';
          fields.push_back(CsvField{std::string_view(start, static_cast<size_t>(q - start)), true});
          if (escaped) escaped_.push_back(fields.size() - 1);
          p = q + 1;
          break;
        }
        if (p < limit && !kFieldEnd[static_cast<unsigned char>(*p)]) {
          return Invalid("text after a closing quote (a quote inside a field must be doubled)");
        }
      } else {
        char* start = p;
        while (p < limit && !kFieldEnd[static_cast<unsigned char>(*p)]) ++p;
        if (p == limit && !eof_) return false;
        fields.push_back(CsvField{std::string_view(start, static_cast<size_t>(p - start)), false});
      }
      if (p == limit) {
        ++lines;
        end = static_cast<size_t>(p - buf_);
        Unescape(fields);
        return true;
      }
      if (*p == ',') {
        ++p;
        continue;
      }
      // \n, \r\n, or a lone \r
      if (*p == '\r') {
        if (p + 1 == limit && !eof_) return false;
        if (p + 1 < limit && p[1] == '\n') ++p;
      }
      ++lines;
      end = static_cast<size_t>(p + 1 - buf_);
      Unescape(fields);
      return true;
    }
  }

  // Turns each doubled quote of the record's escaped fields into one, in
  // place.
  void Unescape(std::vector<CsvField>& fields) {
    for (size_t i : escaped_) {
      char* c = const_cast<char*>(fields[i].text.data());
      char* const e = c + fields[i].text.size();
      char* out = c;
      for (; c < e; ++c) {
        *out++ = *c;
        if (*c == '"') ++c;
      }
      fields[i].text = std::string_view(fields[i].text.data(), static_cast<size_t>(out - fields[i].text.data()));
    }
    escaped_.clear();
  }

  Status Invalid(const std::string& what) const {
    return InvalidArgument(file_ + ":" + std::to_string(next_line_) + ": " + what,
                           {Diagnostic{file_, static_cast<int>(next_line_), 0, "", what}});
  }

  // Brings the next block in behind the unfinished record; false at the end.
  bool Refill() {
    if (eof_) return false;
    auto next = source_.Take();
    if (!next) return false;
    size_t rest = size_ - pos_;
    char* base = next->data.get() + kHeadroom;
    if (rest <= kHeadroom) {
      std::memcpy(base - rest, buf_ + pos_, rest);
      buf_ = base - rest;
      size_ = rest + next->size;
    } else {
      // A record longer than the headroom: keep it and the new bytes in one
      // growing buffer of our own.
      std::string joined(buf_ + pos_, rest);
      joined.append(base, next->size);
      big_ = std::move(joined);
      buf_ = big_.data();
      size_ = big_.size();
    }
    pos_ = 0;
    if (current_) source_.Give(std::move(current_));
    current_ = std::move(next);
    return true;
  }

  std::string file_;
  mutable BlockSource source_;
  std::unique_ptr<Block> current_;
  std::string big_;
  std::vector<size_t> escaped_;  // fields of the record being parsed with "" in them
  char* buf_ = nullptr;
  size_t size_ = 0, pos_ = 0;
  bool eof_ = false;
  int64_t line_ = 0, next_line_ = 1;
};

}  // namespace

Result<std::unique_ptr<CsvReader>> CsvReader::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::string why = std::strerror(errno);
    if (errno == ENOENT) return NotFound(path + ": no such file");
    return InvalidArgument(path + ": cannot open: " + why);
  }
  unsigned char magic[2] = {0, 0};
  ssize_t n = ::pread(fd, magic, 2, 0);
  bool gzip = n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  return std::unique_ptr<CsvReader>(new FileCsvReader(path, fd, gzip));
}

}  // namespace causeway::cost
