// Streaming CSV (RFC 4180) over a file, plain or gzip-compressed, cut into
// chunks of whole records so several threads can parse one file.
//
// Memory stays bounded whatever the file's size: a second thread reads (and
// gunzips) the file in fixed blocks, at most a few ahead of the parsers, and
// chunks point into those blocks; only a record that spans two blocks is
// copied.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/status.h"

namespace causeway::cost {

// One field of a record. `quoted` tells `""` (an empty string) from an
// empty unquoted field (no value), which FOCUS treats differently.
// `escaped`: the text still has its doubled quotes (""); Unescape turns
// them into one. Left to the reader of the field, as most never need it
// and undoubling every JSON column of a large file costs more than the rest
// of parsing.
struct CsvField {
  std::string_view text;
  bool quoted = false;
  bool escaped = false;
};

// The field's text with "" made ", in place (the chunk is its parser's
// alone); afterwards field.escaped is false.
std::string_view Unescape(CsvField& field);

// Whole records of the file: [data, data + size) starts at a record and
// ends after one (a line break, or the end of the file).
struct CsvChunk {
  std::shared_ptr<char> hold;  // keeps `data` alive; the chunk may change it
  char* data = nullptr;
  size_t size = 0;
  int64_t first_line = 1;  // the line `data` starts on
};

// Parses the records of one chunk. Records end with LF or CRLF; quoted
// fields may hold separators, quotes ("" inside quotes) and line breaks.
class CsvRecords {
 public:
  CsvRecords(const std::string& file, const CsvChunk& chunk);
  // The next record into `fields` (views valid while the chunk lives);
  // false at the end of the chunk. kInvalidArgument with file and line for
  // an unterminated quote or text after a closing quote. Empty lines are
  // not records.
  Result<bool> Next(std::vector<CsvField>& fields);
  // The 1-based line on which the last record returned began.
  int64_t line() const { return line_; }

 private:
  Status Invalid(const std::string& what) const;
  // The first of , \n \r " at or after p (p < end_), or end_. Reads the
  // chunk 64 bytes at a time into a bitmap, kept for the calls that follow.
  char* NextSpecial(char* p);

  const std::string& file_;
  char* p_;
  char* end_;
  int64_t line_ = 0, next_line_;
  char* window_ = nullptr;  // the 64 bytes `special_` describes
  uint64_t special_ = 0;    // bit i: window_[i] is , \n \r or "
};

// Cuts a file into chunks. Next is safe to call from several threads.
class CsvChunker {
 public:
  // Opens `path`; gzip is recognised by its magic bytes, not the name. A
  // leading UTF-8 byte-order mark is dropped. kNotFound / kInvalidArgument
  // name the file.
  static Result<std::unique_ptr<CsvChunker>> Open(const std::string& path);
  virtual ~CsvChunker() = default;
  // The next chunk; nullopt at the end of the file.
  virtual Result<std::optional<CsvChunk>> Next() = 0;
};

}  // namespace causeway::cost
