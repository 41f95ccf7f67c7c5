#include "causeway/store.h"
#include "store/postgres/pg_conn.h"

namespace causeway {

bool IsPostgresUrl(const std::string& db) {
  return db.rfind("postgresql://", 0) == 0 || db.rfind("postgres://", 0) == 0;
}

Result<std::unique_ptr<Store>> OpenStore(const std::string& db, bool read_only) {
  if (IsPostgresUrl(db)) return OpenPostgresStore(db, PostgresOptions{.read_only = read_only});
  std::string path = db.rfind("sqlite:", 0) == 0 ? db.substr(7) : db;
  return OpenSqliteStore(path, SqliteOptions{.read_only = read_only});
}

std::string DescribeDb(const std::string& db) { return IsPostgresUrl(db) ? pg::Redact(db) : db; }

}  // namespace causeway
