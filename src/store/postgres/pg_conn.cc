#include "store/postgres/pg_conn.h"

#include <cctype>
#include <charconv>
#include <cstring>

namespace causeway::pg {

std::vector<const char*> Params::Pointers() const {
  std::vector<const char*> out;
  out.reserve(values_.size());
  for (const auto& v : values_) out.push_back(v ? v->c_str() : nullptr);
  return out;
}

Params& Params::AddArray(const std::vector<std::string>& items) {
  std::string out = "{";
  for (const std::string& item : items) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (char c : item) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return Add(out);
}

int64_t Rows::Int(int row, int col) const {
  const char* p = PQgetvalue(r_.get(), row, col);
  int64_t v = 0;
  std::from_chars(p, p + std::strlen(p), v);
  return v;
}

int64_t Rows::Affected() const {
  const char* p = PQcmdTuples(r_.get());
  int64_t v = 0;
  std::from_chars(p, p + std::strlen(p), v);
  return v;
}

std::string Redact(const std::string& url) {
  // postgresql://user:password@host... -> postgresql://user:***@host...
  auto scheme = url.find("://");
  auto at = url.find('@');
  if (scheme == std::string::npos || at == std::string::npos || at < scheme) {
    // key=value form: hide password=...
    auto pw = url.find("password=");
    if (pw == std::string::npos) return url;
    auto end = url.find(' ', pw);
    return url.substr(0, pw) + "password=***" + (end == std::string::npos ? "" : url.substr(end));
  }
  auto colon = url.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

Conn::~Conn() { PQfinish(conn_); }

Result<std::unique_ptr<Conn>> Conn::Open(const std::string& url) {
  PGconn* c = PQconnectdb(url.c_str());
  if (PQstatus(c) != CONNECTION_OK) {
    std::string why = c ? PQerrorMessage(c) : "out of memory";
    while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
    PQfinish(c);
    return Unavailable("cannot connect to PostgreSQL at " + Redact(url) + ": " + why);
  }
  // Quiet: notices (e.g. "relation already exists, skipping") are not ours.
  PQsetNoticeProcessor(c, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<Conn>(new Conn(c));
}

Status Conn::Error(const PGresult* r, std::string_view what) const {
  std::string message = r ? PQresultErrorMessage(r) : PQerrorMessage(conn_);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  std::string sqlstate = state ? state : "";
  std::string text = std::string(what) + ": " + message;
  if (Broken() || sqlstate.rfind("08", 0) == 0 || sqlstate == "57P01" || sqlstate == "57P02" ||
      sqlstate == "57P03" || sqlstate == "53300" || sqlstate == "40001" || sqlstate == "40P01") {
    return Unavailable("PostgreSQL unavailable: " + text);
  }
  if (sqlstate == "23505") return AlreadyExists(text);
  return Internal(text);
}

Result<Rows> Conn::Exec(const char* sql, const Params& params) {
  auto it = prepared_.find(sql);
  if (it == prepared_.end()) {
    std::string name = "s" + std::to_string(prepared_.size());
    PGresult* prep = PQprepare(conn_, name.c_str(), sql, 0, nullptr);
    if (PQresultStatus(prep) != PGRES_COMMAND_OK) {
      Status err = Error(prep, "preparing a statement failed");
      PQclear(prep);
      return err;
    }
    PQclear(prep);
    it = prepared_.emplace(sql, std::move(name)).first;
  }
  auto values = params.Pointers();
  return Finish(PQexecPrepared(conn_, it->second.c_str(), params.size(), values.data(), nullptr, nullptr, 0));
}

Result<std::string> Conn::Inline(std::string_view sql, const Params& params) const {
  auto values = params.Pointers();
  std::string out;
  out.reserve(sql.size() + 64);
  for (size_t i = 0; i < sql.size(); ++i) {
    if (sql[i] != '$' || i + 1 >= sql.size() || !std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      out += sql[i];
      continue;
    }
    size_t end = i + 1;
    int n = 0;
    while (end < sql.size() && std::isdigit(static_cast<unsigned char>(sql[end]))) n = n * 10 + (sql[end++] - '0');
    if (n < 1 || n > static_cast<int>(values.size())) return Internal("statement refers to missing parameter $" + std::to_string(n));
    const char* v = values[static_cast<size_t>(n - 1)];
    if (!v) {
      out += "NULL";
    } else {
      char* quoted = PQescapeLiteral(conn_, v, std::strlen(v));
      if (!quoted) return InvalidArgument(std::string("cannot quote a value: ") + PQerrorMessage(conn_));
      out += quoted;
      PQfreemem(quoted);
    }
    i = end - 1;
  }
  return out;
}

Result<Rows> Conn::ExecOnce(const std::string& sql, const Params& params) {
  auto values = params.Pointers();
  return Finish(PQexecParams(conn_, sql.c_str(), params.size(), nullptr, values.data(), nullptr, nullptr, 0));
}

Result<Rows> Conn::Finish(PGresult* r) const {
  ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    Status err = Error(r, "query failed");
    PQclear(r);
    return err;
  }
  return Rows(r);
}

Status Conn::ExecScript(const char* sql) {
  PGresult* r = PQexec(conn_, sql);
  ExecStatusType st = PQresultStatus(r);
  Status out = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? Status::Ok() : Error(r, "statement failed");
  PQclear(r);
  return out;
}

Result<Rows> Conn::Script(const std::string& sql) { return Finish(PQexec(conn_, sql.c_str())); }

}  // namespace causeway::pg
