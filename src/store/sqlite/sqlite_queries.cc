#include "store/sqlite/sqlite_queries.h"

#include <nlohmann/json.hpp>

#include "store/records_json.h"

namespace causeway::sqlite {

const std::string kSelectJobById = std::string("SELECT ") + rows::kJobColumns + " FROM jobs WHERE id = ?1";
const std::string kSelectTokenById = std::string("SELECT ") + rows::kTokenColumns + " FROM api_tokens WHERE id = ?1";
const std::string kSelectTokenByHash =
    std::string("SELECT ") + rows::kTokenColumns + " FROM api_tokens WHERE hash = ?1";
const std::string kSelectDirectoryEntry =
    std::string("SELECT ") + rows::kDirectoryColumns + " FROM directory WHERE kind = ?1 AND id = ?2";
const std::string kSelectBreakglassById =
    std::string("SELECT ") + rows::kBreakglassColumns + " FROM breakglass WHERE id = ?1";

Result<std::vector<ImportedAuditEvent>> ReadImported(Conn& conn, const rows::SqlWithParams& q) {
  ASSIGN_OR_RETURN(sqlite3_stmt * raw, conn.PrepareOnce(q.sql));
  Stmt s(raw, /*owned=*/true);
  for (size_t i = 0; i < q.params.size(); ++i) {
    if (const auto* n = std::get_if<int64_t>(&q.params[i])) {
      s.Bind(static_cast<int>(i + 1), *n);
    } else {
      s.Bind(static_cast<int>(i + 1), std::get<std::string>(q.params[i]));
    }
  }
  return ReadAll(s, rows::ReadImportedAudit<Stmt>);
}

Status PutMembers(Conn& conn, const std::string& group_id, const std::vector<std::string>& members) {
  {
    CW_STMT(del, conn, schema::kDeleteMembersSql);
    del.Bind(1, group_id);
    RETURN_IF_ERROR(del.Exec());
  }
  if (members.empty()) return Status::Ok();
  CW_STMT(ins, conn, schema::kInsertMembersSqlite);
  ins.Bind(1, group_id).Bind(2, nlohmann::json(members).dump());
  return ins.Exec();
}

Status FillMembers(Conn& conn) {
  std::vector<DirectoryEntry> groups;
  {
    CW_STMT(s, conn, schema::kGroupsStoredSql);
    Status st;
    while (s.Step(st)) {
      DirectoryEntry g;
      g.kind = "Group";
      g.id = s.Text(0);
      g.resource = s.Text(1);
      groups.push_back(std::move(g));
    }
    RETURN_IF_ERROR(st);
  }
  for (const DirectoryEntry& g : groups) RETURN_IF_ERROR(PutMembers(conn, g.id, GroupMemberIds(g)));
  return Status::Ok();
}

Result<std::optional<DirectoryEntry>> FindDirectoryEntryIn(Conn& conn, const std::string& kind,
                                                           const std::string& id) {
  CW_STMT(s, conn, kSelectDirectoryEntry.c_str());
  s.Bind(1, kind).Bind(2, id);
  return ReadFirst(s, rows::ReadDirectoryEntry<Stmt>);
}

}  // namespace causeway::sqlite
