#include "cost/csv.h"

#include <emmintrin.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <deque>
#include <thread>

#include "causeway/mutex.h"

namespace causeway::cost {
namespace {

constexpr size_t kBlockBytes = 4 << 20;
// Blocks allocated at most: read ahead, plus those parsers still hold.
constexpr size_t kMaxBlocks = 16;
constexpr size_t kReadAhead = 3;
// Readable bytes past the end of every buffer chunks point into, so
// parsers may load 64 bytes at a time near the end.
constexpr size_t kPadding = 64;

// Block buffers, reused: a fresh 4 MiB allocation per block would cost a
// page fault per 4 KiB. Chunks hold their block through a shared_ptr whose
// deleter brings it back here, so the pool outlives the reader if it must.
struct Pool {
  Mutex mu;
  CondVar cv;
  std::vector<char*> free GUARDED_BY(mu);
  size_t allocated GUARDED_BY(mu) = 0;
  bool closed GUARDED_BY(mu) = false;
  ~Pool() {
    for (char* b : free) delete[] b;
  }
};

std::shared_ptr<char> Hold(const std::shared_ptr<Pool>& pool, char* buffer) {
  return std::shared_ptr<char>(buffer, [pool](char* b) {
    MutexLock lock(pool->mu);
    pool->free.push_back(b);
    pool->cv.NotifyAll();
  });
}

struct Block {
  std::shared_ptr<char> data;
  size_t size = 0;
};

// Reads the file on its own thread (and gunzips it), at most kReadAhead
// blocks ahead of the chunker.
class BlockSource {
 public:
  BlockSource(int fd, bool gzip) : fd_(fd), gzip_(gzip), pool_(std::make_shared<Pool>()) {
    thread_ = std::thread([this] { Run(); });
  }
  ~BlockSource() {
    {
      MutexLock lock(mu_);
      stop_ = true;
    }
    cv_.NotifyAll();
    {
      MutexLock lock(pool_->mu);
      pool_->closed = true;
    }
    pool_->cv.NotifyAll();
    thread_.join();
    ::close(fd_);
  }

  // The next block, or nullopt at the end (status() says how it ended).
  std::optional<Block> Take() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    while (full_.empty() && !done_) cv_.Wait(mu_);
    if (full_.empty()) return std::nullopt;
    Block b = std::move(full_.front());
    full_.pop_front();
    cv_.NotifyAll();
    return b;
  }
  Status status() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return status_;
  }

 private:
  char* Buffer() {
    MutexLock lock(pool_->mu);
    while (pool_->free.empty() && pool_->allocated >= kMaxBlocks && !pool_->closed) pool_->cv.Wait(pool_->mu);
    if (pool_->closed) return nullptr;
    if (!pool_->free.empty()) {
      char* b = pool_->free.back();
      pool_->free.pop_back();
      return b;
    }
    ++pool_->allocated;
    return new char[kBlockBytes + kPadding]();
  }
  bool Publish(Block b) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    while (full_.size() >= kReadAhead && !stop_) cv_.Wait(mu_);
    if (stop_) return false;
    full_.push_back(std::move(b));
    cv_.NotifyAll();
    return true;
  }
  void Finish(Status st) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    status_ = std::move(st);
    done_ = true;
    cv_.NotifyAll();
  }

  // Fills `out` with up to kBlockBytes of the file's text; 0 at the end.
  Result<size_t> Fill(char* out, z_stream& z, char* raw, bool& stream_end) {
    if (!gzip_) {
      size_t got = 0;
      while (got < kBlockBytes) {
        ssize_t n = ::read(fd_, out + got, kBlockBytes - got);
        if (n < 0) return InvalidArgument(std::string("read failed: ") + std::strerror(errno));
        if (n == 0) break;
        got += static_cast<size_t>(n);
      }
      stream_end = got < kBlockBytes;
      return got;
    }
    z.next_out = reinterpret_cast<Bytef*>(out);
    z.avail_out = kBlockBytes;
    while (z.avail_out > 0 && !stream_end) {
      if (z.avail_in == 0) {
        ssize_t n = ::read(fd_, raw, kBlockBytes);
        if (n < 0) return InvalidArgument(std::string("read failed: ") + std::strerror(errno));
        if (n == 0) {
          if (!member_done_) return InvalidArgument("the gzip stream ends early (truncated file?)");
          stream_end = true;
          break;
        }
        z.next_in = reinterpret_cast<Bytef*>(raw);
        z.avail_in = static_cast<uInt>(n);
        if (member_done_) {
          // Another gzip member follows (as `cat a.gz b.gz`): one file.
          inflateReset(&z);
          member_done_ = false;
        }
      }
      int rc = inflate(&z, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_done_ = true;
        if (z.avail_in > 0) {
          inflateReset(&z);
          member_done_ = false;
        }
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return InvalidArgument(std::string("not valid gzip data: ") + (z.msg ? z.msg : "inflate failed"));
      }
    }
    return kBlockBytes - z.avail_out;
  }

  void Run() {
    z_stream z{};
    if (gzip_ && inflateInit2(&z, 15 + 32) != Z_OK) return Finish(Internal("zlib failed to start"));
    std::unique_ptr<char[]> raw(gzip_ ? new char[kBlockBytes] : nullptr);
    bool stream_end = false;
    Status st;
    while (!stream_end) {
      char* buffer = Buffer();
      if (!buffer) break;
      std::shared_ptr<char> held = Hold(pool_, buffer);
      auto n = Fill(buffer, z, raw.get(), stream_end);
      if (!n.ok()) {
        st = n.status();
        break;
      }
      if (*n > 0 && !Publish(Block{std::move(held), *n})) break;
    }
    if (gzip_) inflateEnd(&z);
    Finish(std::move(st));
  }

  int fd_;
  bool gzip_;
  bool member_done_ = false;
  std::shared_ptr<Pool> pool_;
  std::thread thread_;
  Mutex mu_;
  CondVar cv_;
  std::deque<Block> full_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  bool done_ GUARDED_BY(mu_) = false;
  Status status_ GUARDED_BY(mu_);
};

// Where records end in a block: line breaks outside quotes.
struct Scan {
  static constexpr size_t kNone = SIZE_MAX;
  size_t first_end = kNone, last_end = kNone;  // just past the first / last record-ending \n
  int64_t lines_to_first = 0, lines_to_last = 0, lines = 0;
  bool in_quotes = false;  // at the end of the block
};

// Sixteen bytes at a time: a quote flips "inside quotes"; a \n outside
// quotes ends a record. Doubled quotes flip twice, so need no care.
Scan ScanBlock(const char* p, size_t n, bool in_quotes) {
  Scan s;
  auto on_newline = [&](size_t at) {
    ++s.lines;
    if (in_quotes) return;
    if (s.first_end == Scan::kNone) s.first_end = at + 1, s.lines_to_first = s.lines;
    s.last_end = at + 1, s.lines_to_last = s.lines;
  };
  const __m128i quote = _mm_set1_epi8('"'), newline = _mm_set1_epi8('\n');
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    unsigned q = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)));
    unsigned nl = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, newline)));
    if (nl == 0) {
      if (std::popcount(q) & 1) in_quotes = !in_quotes;
      continue;
    }
    if (q == 0 && !in_quotes) {
      if (s.first_end == Scan::kNone) {
        s.first_end = i + static_cast<size_t>(std::countr_zero(nl)) + 1;
        s.lines_to_first = s.lines + 1;
      }
      s.lines += std::popcount(nl);
      s.last_end = i + 31 - static_cast<size_t>(std::countl_zero(nl)) + 1;
      s.lines_to_last = s.lines;
      continue;
    }
    for (unsigned m = q | nl; m != 0; m &= m - 1) {
      unsigned bit = static_cast<unsigned>(std::countr_zero(m));
      if ((q >> bit) & 1) in_quotes = !in_quotes;
      else on_newline(i + bit);
    }
  }
  for (; i < n; ++i) {
    if (p[i] == '"') in_quotes = !in_quotes;
    else if (p[i] == '\n') on_newline(i);
  }
  s.in_quotes = in_quotes;
  return s;
}

std::shared_ptr<char> Copy(const std::string& text) {
  std::shared_ptr<char> out(new char[text.size() + kPadding](), std::default_delete<char[]>());
  std::memcpy(out.get(), text.data(), text.size());
  return out;
}

class FileChunker final : public CsvChunker {
 public:
  FileChunker(std::string file, int fd, bool gzip) : file_(std::move(file)), source_(fd, gzip) {}

  Result<std::optional<CsvChunk>> Next() override {
    MutexLock lock(mu_);
    if (pending_) return std::exchange(pending_, std::nullopt);
    while (true) {
      std::optional<Block> block = source_.Take();
      if (!block) {
        RETURN_IF_ERROR(source_.status().WithPrefix(file_));
        if (carry_.empty()) return std::optional<CsvChunk>();
        // The last record, without a line break after it.
        CsvChunk last{Copy(carry_), nullptr, carry_.size(), carry_line_};
        last.data = last.hold.get();
        carry_.clear();
        return std::optional<CsvChunk>(std::move(last));
      }
      char* data = block->data.get();
      size_t size = block->size;
      if (first_block_) {
        first_block_ = false;
        if (size >= 3 && std::memcmp(data, "\xEF\xBB\xBF", 3) == 0) data += 3, size -= 3;
      }
      Scan scan = ScanBlock(data, size, in_quotes_);
      const int64_t block_line = carry_line_ + carry_lines_;
      if (scan.last_end == Scan::kNone) {
        // A record longer than the block: keep gathering it.
        carry_.append(data, size);
        carry_lines_ += scan.lines;
        in_quotes_ = scan.in_quotes;
        continue;
      }
      std::optional<CsvChunk> seam;
      size_t main_start = 0;
      int64_t main_line = block_line;
      if (!carry_.empty()) {
        carry_.append(data, scan.first_end);
        seam = CsvChunk{Copy(carry_), nullptr, carry_.size(), carry_line_};
        seam->data = seam->hold.get();
        main_start = scan.first_end;
        main_line = block_line + scan.lines_to_first;
      }
      carry_.assign(data + scan.last_end, size - scan.last_end);
      carry_line_ = block_line + scan.lines_to_last;
      carry_lines_ = scan.lines - scan.lines_to_last;
      in_quotes_ = scan.in_quotes;
      std::optional<CsvChunk> main;
      if (scan.last_end > main_start) {
        main = CsvChunk{block->data, data + main_start, scan.last_end - main_start, main_line};
      }
      if (seam) {
        pending_ = std::move(main);
        return seam;
      }
      if (main) return main;
    }
  }


 private:
  std::string file_;
  BlockSource source_;
  Mutex mu_;
  bool first_block_ GUARDED_BY(mu_) = true;
  std::optional<CsvChunk> pending_ GUARDED_BY(mu_);
  std::string carry_ GUARDED_BY(mu_);  // the unfinished record at the end of the last block
  int64_t carry_line_ GUARDED_BY(mu_) = 1;
  int64_t carry_lines_ GUARDED_BY(mu_) = 0;
  bool in_quotes_ GUARDED_BY(mu_) = false;
};

// Characters that end a field.
constexpr std::array<bool, 256> kFieldEnd = [] {
  std::array<bool, 256> t{};
  t[','] = t['\n'] = t['\r'] = true;
  return t;
}();

// Bit i set where p[i] is , \n \r or ", for i in 0..63 (p has 64 readable
// bytes: every buffer has kPadding past its end).
uint64_t SpecialBits(const char* p) {
  const __m128i comma = _mm_set1_epi8(','), lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'),
                quote = _mm_set1_epi8('"');
  uint64_t bits = 0;
  for (int k = 0; k < 4; ++k) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, comma), _mm_cmpeq_epi8(v, lf)),
                               _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, quote)));
    bits |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(hit))) << (16 * k);
  }
  return bits;
}

}  // namespace

CsvRecords::CsvRecords(const std::string& file, const CsvChunk& chunk)
    : file_(file), p_(chunk.data), end_(chunk.data + chunk.size), next_line_(chunk.first_line) {}

Status CsvRecords::Invalid(const std::string& what) const {
  return InvalidArgument(file_ + ":" + std::to_string(next_line_) + ": " + what,
                         {Diagnostic{file_, static_cast<int>(next_line_), 0, "", what}});
}

__attribute__((always_inline)) inline char* CsvRecords::NextSpecial(char* p) {
  while (p < end_) {
    if (!window_ || p < window_ || p >= window_ + 64) {
      window_ = p;
      special_ = SpecialBits(p);
    }
    uint64_t ahead = special_ >> (p - window_);
    if (ahead != 0) {
      char* at = p + std::countr_zero(ahead);
      return at < end_ ? at : end_;
    }
    p = window_ + 64;
  }
  return end_;
}

Result<bool> CsvRecords::Next(std::vector<CsvField>& fields) {
  while (p_ < end_) {
    fields.clear();
    char* p = p_;
    int lines = 0;
    while (true) {
      if (p < end_ && *p == '"') {
        // Quoted: up to the quote that is not doubled; separators and line
        // breaks inside are text (line breaks still count lines).
        char* start = ++p;
        bool escaped = false;
        while (true) {
          char* q = NextSpecial(p);
          if (q == end_) return Invalid("a quoted field is not closed before the end of the file");
          if (*q != '"') {
            lines += *q == '\n';
            p = q + 1;
            continue;
          }
          if (q + 1 < end_ && q[1] == '"') {
            escaped = true;
            p = q + 2;
            continue;
          }
          fields.push_back(CsvField{std::string_view(start, static_cast<size_t>(q - start)), true, escaped});
          p = q + 1;
          break;
        }
        if (p < end_ && !kFieldEnd[static_cast<unsigned char>(*p)]) {
          return Invalid("text after a closing quote (a quote inside a field must be doubled)");
        }
      } else {
        // Unquoted: up to , \n or \r; a quote inside is text.
        char* start = p;
        p = NextSpecial(p);
        while (p < end_ && *p == '"') p = NextSpecial(p + 1);
        fields.push_back(CsvField{std::string_view(start, static_cast<size_t>(p - start)), false});
      }
      if (p < end_ && *p == ',') {
        ++p;
        continue;
      }
      // The record ends: \n, \r\n, a lone \r, or the end of the chunk.
      if (p < end_ && *p == '\r') ++p;
      if (p < end_ && *p == '\n') ++p;
      ++lines;
      break;
    }
    p_ = p;
    line_ = next_line_;
    next_line_ += lines;
    // A line with nothing on it is not a record.
    if (fields.size() == 1 && fields[0].text.empty() && !fields[0].quoted) continue;
    return true;
  }
  return false;
}

std::string_view Unescape(CsvField& field) {
  if (!field.escaped) return field.text;
  char* c = const_cast<char*>(field.text.data());
  char* const e = c + field.text.size();
  char* out = c;
  for (; c < e; ++c) {
    *out++ = *c;
    if (*c == '"') ++c;
  }
  field.text = std::string_view(field.text.data(), static_cast<size_t>(out - field.text.data()));
  field.escaped = false;
  return field.text;
}

Result<std::unique_ptr<CsvChunker>> CsvChunker::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::string why = std::strerror(errno);
    if (errno == ENOENT) return NotFound(path + ": no such file");
    return InvalidArgument(path + ": cannot open: " + why);
  }
  unsigned char magic[2] = {0, 0};
  ssize_t n = ::pread(fd, magic, 2, 0);
  bool gzip = n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  return std::unique_ptr<CsvChunker>(new FileChunker(path, fd, gzip));
}

}  // namespace causeway::cost
