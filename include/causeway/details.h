// Details: the typed, ordered document an audit event carries (who was
// affected, which attempt, which credential...). It holds only null, booleans,
// 64-bit integers, strings, lists and nested Details: no floating point
// values, so that every value has exactly one spelling in the audit chain's
// canonical JSON (src/store/audit_chain.h). Keys are unique and kept sorted,
// the order the canonical JSON writes them in.
//
// JSON is how Details are stored and shown, and that encoding lives at the
// edge (src/store/records_json.h); code that only builds or reads details
// never sees it.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace causeway {

class DetailValue;

class Details {
 public:
  using Entry = std::pair<std::string, DetailValue>;

  Details();
  Details(std::initializer_list<Entry> entries);  // a later duplicate key wins
  Details(const Details&);
  Details(Details&&) noexcept;
  Details& operator=(const Details&);
  Details& operator=(Details&&) noexcept;
  ~Details();

  // The value under `key`, inserted as null when absent.
  DetailValue& operator[](std::string_view key);
  // Sets `key`, replacing what was there.
  void Set(std::string_view key, DetailValue value);
  // Copies every entry of `other` over this one's, replacing equal keys.
  void Merge(const Details& other);
  bool Erase(std::string_view key);

  // nullptr when absent.
  const DetailValue* Find(std::string_view key) const;
  bool Contains(std::string_view key) const { return Find(key) != nullptr; }
  // The string, integer or boolean under `key`, or `fallback` when it is absent or
  // of another type.
  std::string String(std::string_view key, std::string_view fallback = "") const;
  int64_t Int(std::string_view key, int64_t fallback = 0) const;
  bool Bool(std::string_view key, bool fallback = false) const;
  // The nested Details under `key`; nullptr when absent or not an object.
  const Details* Object(std::string_view key) const;

  bool empty() const;
  size_t size() const;
  // Entries in key order.
  std::vector<Entry>::const_iterator begin() const;
  std::vector<Entry>::const_iterator end() const;

  bool operator==(const Details& other) const;

 private:
  std::vector<Entry>::iterator LowerBound(std::string_view key);

  std::vector<Entry> entries_;  // sorted by key, keys unique
};

class DetailValue {
 public:
  using List = std::vector<DetailValue>;

  DetailValue() = default;  // null
  DetailValue(std::nullptr_t) {}
  DetailValue(bool b) : v_(b) {}
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  DetailValue(T n) : v_(static_cast<int64_t>(n)) {}
  DetailValue(std::string s) : v_(std::move(s)) {}
  DetailValue(std::string_view s) : v_(std::string(s)) {}
  DetailValue(const char* s) : v_(std::string(s)) {}
  DetailValue(List list) : v_(std::move(list)) {}
  DetailValue(const std::vector<std::string>& strings);
  DetailValue(Details object) : v_(std::move(object)) {}

  bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
  // nullptr when the value is of another type.
  const bool* AsBool() const { return std::get_if<bool>(&v_); }
  const int64_t* AsInt() const { return std::get_if<int64_t>(&v_); }
  const std::string* AsString() const { return std::get_if<std::string>(&v_); }
  const List* AsList() const { return std::get_if<List>(&v_); }
  const Details* AsObject() const { return std::get_if<Details>(&v_); }
  List* AsList() { return std::get_if<List>(&v_); }
  Details* AsObject() { return std::get_if<Details>(&v_); }

  bool operator==(const DetailValue& other) const { return v_ == other.v_; }

 private:
  std::variant<std::monostate, bool, int64_t, std::string, List, Details> v_;
};

}  // namespace causeway
