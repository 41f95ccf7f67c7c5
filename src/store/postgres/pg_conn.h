// A thin RAII layer over libpq: a connection with a cache of prepared
// statements, text parameters, and result rows. Errors become Statuses by
// SQLSTATE: unique violations kAlreadyExists; a lost or refused connection,
// a server shutting down, serialization failures and deadlocks kUnavailable
// (retryable); anything else kInternal.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/status.h"

namespace causeway::pg {

// Query parameters, $1, $2, ... in order, sent as text.
class Params {
 public:
  Params& Add(std::string_view v) {
    values_.emplace_back(std::string(v));
    return *this;
  }
  Params& Add(const char* v) { return Add(std::string_view(v)); }
  Params& Add(const std::string& v) { return Add(std::string_view(v)); }
  Params& Add(int64_t v) {
    values_.emplace_back(std::to_string(v));
    return *this;
  }
  Params& Add(int v) { return Add(static_cast<int64_t>(v)); }
  Params& Null() {
    values_.emplace_back(std::nullopt);
    return *this;
  }
  template <typename T>
  Params& Add(const std::optional<T>& v) {
    return v ? Add(*v) : Null();
  }
  // A text[] literal: {"a","b"}, each element quoted and escaped.
  Params& AddArray(const std::vector<std::string>& items);
  // Empty text is NULL: for optional filters.
  Params& OrNull(std::string_view v) { return v.empty() ? Null() : Add(v); }

  int size() const { return static_cast<int>(values_.size()); }
  std::vector<const char*> Pointers() const;

 private:
  std::vector<std::optional<std::string>> values_;
};

// The rows of one result.
class Rows {
 public:
  explicit Rows(PGresult* r) : r_(r, &PQclear) {}
  int size() const { return PQntuples(r_.get()); }
  bool IsNull(int row, int col) const { return PQgetisnull(r_.get(), row, col) != 0; }
  std::string Text(int row, int col) const {
    return std::string(PQgetvalue(r_.get(), row, col), static_cast<size_t>(PQgetlength(r_.get(), row, col)));
  }
  int64_t Int(int row, int col) const;
  std::optional<int64_t> OptInt(int row, int col) const {
    return IsNull(row, col) ? std::nullopt : std::optional<int64_t>(Int(row, col));
  }
  // Rows an INSERT, UPDATE or DELETE touched.
  int64_t Affected() const;

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> r_;
};

// Row `row` of a result, read by column alone (a rows:: Row).
class Row {
 public:
  Row(const Rows& rows, int row) : rows_(rows), row_(row) {}
  std::string Text(int col) const { return rows_.Text(row_, col); }
  int64_t Int(int col) const { return rows_.Int(row_, col); }
  std::optional<int64_t> OptInt(int col) const { return rows_.OptInt(row_, col); }

 private:
  const Rows& rows_;
  int row_;
};

// Every row of `r` as read by `read` (a function of a Row).
template <typename Read>
auto ReadAll(const Rows& r, Read read) {
  std::vector<decltype(read(Row(r, 0)))> out;
  out.reserve(static_cast<size_t>(r.size()));
  for (int i = 0; i < r.size(); ++i) out.push_back(read(Row(r, i)));
  return out;
}
// The first row of `r` as read by `read`; nullopt when there is none.
template <typename Read>
auto ReadFirst(const Rows& r, Read read) {
  using T = decltype(read(Row(r, 0)));
  return r.size() == 0 ? std::optional<T>() : std::optional<T>(read(Row(r, 0)));
}

class Conn {
 public:
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  // `url` is a postgresql:// URI or a libpq key=value string.
  static Result<std::unique_ptr<Conn>> Open(const std::string& url);

  // Runs `sql` (prepared once per connection; `sql` must outlive the Conn,
  // a literal or a static string) with `params`.
  Result<Rows> Exec(const char* sql, const Params& params = {});
  // `sql` with each $N replaced by parameter N as an escaped literal (or
  // NULL): for sending several statements in one round trip.
  Result<std::string> Inline(std::string_view sql, const Params& params) const;
  // Runs `sql` once, unprepared: for statements built at run time.
  Result<Rows> ExecOnce(const std::string& sql, const Params& params);
  // Runs one or more statements without parameters or results.
  Status ExecScript(const char* sql);
  // Runs one or more statements without parameters; the last one's rows.
  // The first that fails stops the rest and is the error.
  Result<Rows> Script(const std::string& sql);

  // Whether the open transaction failed (only ROLLBACK is accepted now).
  bool InFailedTransaction() const { return PQtransactionStatus(conn_) == PQTRANS_INERROR; }

  // Whether the connection is gone (the server restarted or went away).
  bool Broken() const { return PQstatus(conn_) != CONNECTION_OK; }

 private:
  explicit Conn(PGconn* c) : conn_(c) {}
  Status Error(const PGresult* r, std::string_view what) const;
  // Rows of a successful result; the error otherwise (and `r` freed).
  Result<Rows> Finish(PGresult* r) const;

  PGconn* conn_;
  std::map<const char*, std::string> prepared_;  // sql -> statement name
};

// "postgresql://user:***@host/db": a URL fit for messages and logs.
std::string Redact(const std::string& url);

}  // namespace causeway::pg
