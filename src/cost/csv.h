// Streaming CSV (RFC 4180) over a file, plain or gzip-compressed.
//
// Memory stays bounded whatever the file's size: the file is read in blocks
// by a second thread, which also hashes the bytes (SHA-256 of the file as
// stored, compressed or not) so an import can be recognised when it comes
// again without reading the file twice.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/status.h"

namespace causeway::cost {

// One field of a record. `quoted` tells `""` (an empty string) from an
// empty unquoted field (no value), which FOCUS treats differently.
struct CsvField {
  std::string_view text;
  bool quoted = false;
};

class CsvReader {
 public:
  // Opens `path`; gzip is recognised by its magic bytes, not the name.
  // kNotFound / kInvalidArgument name the file.
  static Result<std::unique_ptr<CsvReader>> Open(const std::string& path);
  virtual ~CsvReader() = default;

  // The next record into `fields` (views valid until the next call); false
  // at the end of the file. A leading UTF-8 byte-order mark is skipped;
  // records end with LF or CRLF; quoted fields may hold separators, quotes
  // ("" inside quotes) and line breaks. An unterminated quote or a quote in
  // the middle of an unquoted field is kInvalidArgument with file and line.
  virtual Result<bool> Next(std::vector<CsvField>& fields) = 0;

  // The 1-based line on which the last record returned began.
  virtual int64_t line() const = 0;
  // Lower-case hex SHA-256 of every byte of the file; only once Next has
  // returned false.
  virtual std::string sha256() const = 0;
  virtual int64_t bytes_read() const = 0;
};

}  // namespace causeway::cost
