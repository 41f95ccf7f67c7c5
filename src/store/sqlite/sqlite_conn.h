// A thin RAII layer over the SQLite C API: a connection with a cache of
// prepared statements, and a statement cursor that binds and reads columns.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "causeway/status.h"

namespace causeway::sqlite {

// A prepared statement borrowed from a Conn's cache; reset on destruction.
class Stmt {
 public:
  // `owned`: a statement of PrepareOnce, finalized rather than kept.
  explicit Stmt(sqlite3_stmt* s, bool owned = false) : s_(s), owned_(owned) {}
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt() {
    if (owned_) {
      sqlite3_finalize(s_);
      return;
    }
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }

  Stmt& Bind(int i, std::string_view v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // Binds without copying: `v` must stay unchanged until the statement is
  // reset.
  Stmt& BindStatic(int i, std::string_view v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
    return *this;
  }
  Stmt& Bind(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Stmt& BindNull(int i) {
    sqlite3_bind_null(s_, i);
    return *this;
  }
  template <typename T>
  Stmt& Bind(int i, const std::optional<T>& v) {
    return v ? Bind(i, *v) : BindNull(i);
  }

  // Steps once: true with a row, false when done; errors go to `status`.
  bool Step(Status& status);
  // Runs a statement that returns no rows.
  Status Exec();

  std::string Text(int col) const { return std::string(View(col)); }
  // The column's text, valid until the next Step.
  std::string_view View(int col) const {
    auto p = sqlite3_column_text(s_, col);
    return p ? std::string_view(reinterpret_cast<const char*>(p), sqlite3_column_bytes(s_, col)) : std::string_view();
  }
  int64_t Int(int col) const { return sqlite3_column_int64(s_, col); }
  bool IsNull(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
  std::optional<int64_t> OptInt(int col) const {
    return IsNull(col) ? std::nullopt : std::optional<int64_t>(Int(col));
  }

 private:
  sqlite3_stmt* s_;
  bool owned_ = false;
};

// Binds ?1, ?2, ... in order (a rows:: Sink). Text the caller owns (an
// lvalue) is bound without a copy and must stay unchanged until the
// statement has run; a temporary is copied.
class Binder {
 public:
  explicit Binder(Stmt& s, int first = 1) : s_(s), next_(first) {}
  Binder& Add(const std::string& v) {
    s_.BindStatic(next_++, v);
    return *this;
  }
  Binder& Add(std::string&& v) {
    s_.Bind(next_++, std::string_view(v));
    return *this;
  }
  Binder& Add(int64_t v) {
    s_.Bind(next_++, v);
    return *this;
  }
  Binder& Add(const std::optional<int64_t>& v) {
    s_.Bind(next_++, v);
    return *this;
  }
  // The next parameter's number.
  int next() const { return next_; }

 private:
  Stmt& s_;
  int next_;
};

class Conn {
 public:
  ~Conn();
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  static Result<std::unique_ptr<Conn>> Open(const std::string& path, bool read_only);

  // Prepares (once) and returns `sql`; `sql` must outlive the Conn (a literal).
  Result<sqlite3_stmt*> Prepare(const char* sql);
  // Prepares `sql`, built at run time, for one use (wrap in Stmt(s, true)).
  Result<sqlite3_stmt*> PrepareOnce(const std::string& sql);
  // Runs one or more statements without results.
  Status ExecScript(const char* sql);

  sqlite3* db() const { return db_; }
  // Maps the connection's last error to a Status.
  Status Error(std::string_view what) const;

 private:
  explicit Conn(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  std::map<const char*, sqlite3_stmt*> cache_;
};

// Maps an SQLite result code to a Code: busy/locked become kUnavailable,
// constraint violations kAlreadyExists, corruption kDataLoss.
Status FromSqlite(int rc, std::string_view what, sqlite3* db);

}  // namespace causeway::sqlite
