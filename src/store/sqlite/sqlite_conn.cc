#include "store/sqlite/sqlite_conn.h"

namespace causeway::sqlite {

Status FromSqlite(int rc, std::string_view what, sqlite3* db) {
  std::string msg = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return Unavailable(msg);
    case SQLITE_CONSTRAINT: return AlreadyExists(msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return DataLoss(msg);
    case SQLITE_FULL: return ResourceExhausted(msg);
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM: return FailedPrecondition(msg);
    default: return Internal(msg);
  }
}

bool Stmt::Step(Status& status) {
  int rc = sqlite3_step(s_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) status = FromSqlite(rc, "query failed", sqlite3_db_handle(s_));
  return false;
}

Status Stmt::Exec() {
  Status st;
  while (Step(st)) {
  }
  return st;
}

Conn::~Conn() {
  for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
  sqlite3_close_v2(db_);
}

Result<std::unique_ptr<Conn>> Conn::Open(const std::string& path, bool read_only) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_NOMUTEX |
              (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status st = FromSqlite(rc, "cannot open database " + path, db);
    sqlite3_close_v2(db);
    return st;
  }
  std::unique_ptr<Conn> conn(new Conn(db));
  sqlite3_busy_timeout(db, 5000);
  sqlite3_extended_result_codes(db, 1);
  return conn;
}

Result<sqlite3_stmt*> Conn::Prepare(const char* sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end()) return it->second;
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return FromSqlite(rc, "cannot prepare statement", db_);
  cache_.emplace(sql, stmt);
  return stmt;
}

Result<sqlite3_stmt*> Conn::PrepareOnce(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return FromSqlite(rc, "cannot prepare statement", db_);
  return stmt;
}

Status Conn::ExecScript(const char* sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    return FromSqlite(rc, msg, nullptr);
  }
  return Status::Ok();
}

Status Conn::Error(std::string_view what) const { return FromSqlite(sqlite3_errcode(db_), what, db_); }

}  // namespace causeway::sqlite
