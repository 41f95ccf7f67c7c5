// Writes a PostgreSQL batch holds until it next talks to the server, sent
// then as one script. Rows for the same table go out as one multi-row
// INSERT, so the server parses and plans a statement per table rather than
// one per row.
//
// Contract: the held writes are INSERTs (plain, or upserts that may not
// share a statement) and whole statements such as SAVEPOINT. Between two
// whole statements, rows may be reordered across tables (a table's own rows
// keep their order): tables that others reference go first (Into::order),
// which nothing else held can observe, since no read happens in between.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace causeway::pg {

// The INSERT a held row belongs to.
struct Into {
  const char* head;  // "INSERT INTO t (a, b) VALUES "
  const char* tail;  // after the rows: "" or " ON CONFLICT ... DO UPDATE ..."
  int order;         // lower first: a table others reference
  bool merge;        // rows may share one statement (never an upsert: a
                     // row it updates twice in one statement is an error)
};

class HeldWrites {
 public:
  bool empty() const { return held_.empty(); }
  // A position, for Truncate and StatementAt.
  size_t size() const { return held_.size(); }

  // `row` is "(v1, v2, ...)" with each value a quoted literal.
  void Row(const Into& into, std::string row) { held_.push_back(Held{&into, std::move(row)}); }
  // A statement sent as it is, in its place.
  void Statement(std::string sql) { held_.push_back(Held{nullptr, std::move(sql)}); }
  void StatementAt(size_t at, std::string sql) {
    held_.insert(held_.begin() + static_cast<std::ptrdiff_t>(at), Held{nullptr, std::move(sql)});
  }
  void Truncate(size_t size) { held_.resize(std::min(size, held_.size())); }

  // The script for everything held, which is then forgotten.
  std::string Take() {
    std::string out;
    for (size_t from = 0; from < held_.size();) {
      if (!held_[from].into) {
        out += held_[from++].text;
        out += ";\n";
        continue;
      }
      size_t to = from;
      while (to < held_.size() && held_[to].into) ++to;
      std::stable_sort(held_.begin() + static_cast<std::ptrdiff_t>(from), held_.begin() + static_cast<std::ptrdiff_t>(to),
                       [](const Held& a, const Held& b) {
                         if (a.into->order != b.into->order) return a.into->order < b.into->order;
                         return std::less<const Into*>()(a.into, b.into);  // a table's rows together
                       });
      for (size_t i = from; i < to; ++i) {
        const Into* into = held_[i].into;
        bool first = i == from || held_[i - 1].into != into || !into->merge;
        bool last = i + 1 == to || held_[i + 1].into != into || !into->merge;
        if (first) out += into->head;
        if (!first) out += ", ";
        out += held_[i].text;
        if (last) {
          out += into->tail;
          out += ";\n";
        }
      }
      from = to;
    }
    held_.clear();
    return out;
  }

 private:
  struct Held {
    const Into* into;  // null: a whole statement
    std::string text;
  };
  std::vector<Held> held_;
};

}  // namespace causeway::pg
