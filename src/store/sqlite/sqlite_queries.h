// What the SQLite store's write transaction and its reads share: the
// statement helpers and the queries both run.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/records.h"
#include "causeway/status.h"
#include "store/rows.h"
#include "store/schema.h"
#include "store/sqlite/sqlite_conn.h"

namespace causeway::sqlite {

// Prepares `sql` (cached by the connection) into Stmt `var`.
#define CW_STMT(var, conn, sql)                                   \
  ASSIGN_OR_RETURN(sqlite3_stmt* var##_raw, (conn).Prepare(sql)); \
  ::causeway::sqlite::Stmt var(var##_raw)

// Every remaining row of `s` as read by `read` (a function of the Stmt).
template <typename Read>
auto ReadAll(Stmt& s, Read read) -> Result<std::vector<decltype(read(s))>> {
  std::vector<decltype(read(s))> out;
  Status st;
  while (s.Step(st)) out.push_back(read(s));
  RETURN_IF_ERROR(st);
  return out;
}
// The next row of `s` as read by `read`; nullopt when there is none.
template <typename Read>
auto ReadFirst(Stmt& s, Read read) -> Result<std::optional<decltype(read(s))>> {
  using T = decltype(read(s));
  Status st;
  if (s.Step(st)) return std::optional<T>(read(s));
  RETURN_IF_ERROR(st);
  return std::optional<T>();
}

// The statements (static, as the connection's cache wants them).
extern const std::string kSelectJobById;
extern const std::string kSelectTokenById;
extern const std::string kSelectTokenByHash;
extern const std::string kSelectDirectoryEntry;
extern const std::string kSelectBreakglassById;

// The first row of `sql` with ?1 bound to `key`, as read by `read`.
template <typename Read>
auto QueryOne(Conn& conn, const std::string& sql, std::string_view key, Read read)
    -> Result<std::optional<decltype(read(std::declval<Stmt&>()))>> {
  CW_STMT(s, conn, sql.c_str());
  s.Bind(1, key);
  return ReadFirst(s, read);
}

// A query built at run time (its shape varies, so it is not cached).
Result<std::vector<ImportedAuditEvent>> ReadImported(Conn& conn, const rows::SqlWithParams& q);
// Makes a group's membership rows exactly `members`.
Status PutMembers(Conn& conn, const std::string& group_id, const std::vector<std::string>& members);
// The membership rows of every group stored before directory_members existed.
Status FillMembers(Conn& conn);
Result<std::optional<DirectoryEntry>> FindDirectoryEntryIn(Conn& conn, const std::string& kind, const std::string& id);

}  // namespace causeway::sqlite
