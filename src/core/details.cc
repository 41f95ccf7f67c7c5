#include "causeway/details.h"

#include <algorithm>

namespace causeway {

Details::Details() = default;
Details::Details(const Details&) = default;
Details::Details(Details&&) noexcept = default;
Details& Details::operator=(const Details&) = default;
Details& Details::operator=(Details&&) noexcept = default;
Details::~Details() = default;

Details::Details(std::initializer_list<Entry> entries) {
  for (const Entry& e : entries) Set(e.first, e.second);
}

std::vector<Details::Entry>::iterator Details::LowerBound(std::string_view key) {
  return std::lower_bound(entries_.begin(), entries_.end(), key,
                          [](const Entry& e, std::string_view k) { return e.first < k; });
}

DetailValue& Details::operator[](std::string_view key) {
  auto it = LowerBound(key);
  if (it == entries_.end() || it->first != key) it = entries_.insert(it, Entry{std::string(key), DetailValue()});
  return it->second;
}

void Details::Set(std::string_view key, DetailValue value) { (*this)[key] = std::move(value); }

void Details::Merge(const Details& other) {
  for (const Entry& e : other.entries_) Set(e.first, e.second);
}

bool Details::Erase(std::string_view key) {
  auto it = LowerBound(key);
  if (it == entries_.end() || it->first != key) return false;
  entries_.erase(it);
  return true;
}

const DetailValue* Details::Find(std::string_view key) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), key,
                             [](const Entry& e, std::string_view k) { return e.first < k; });
  return it == entries_.end() || it->first != key ? nullptr : &it->second;
}

std::string Details::String(std::string_view key, std::string_view fallback) const {
  const DetailValue* v = Find(key);
  if (v == nullptr) return std::string(fallback);
  const std::string* s = v->AsString();
  return s == nullptr ? std::string(fallback) : *s;
}

int64_t Details::Int(std::string_view key, int64_t fallback) const {
  const DetailValue* v = Find(key);
  const int64_t* n = v == nullptr ? nullptr : v->AsInt();
  return n == nullptr ? fallback : *n;
}

bool Details::Bool(std::string_view key, bool fallback) const {
  const DetailValue* v = Find(key);
  const bool* b = v == nullptr ? nullptr : v->AsBool();
  return b == nullptr ? fallback : *b;
}

const Details* Details::Object(std::string_view key) const {
  const DetailValue* v = Find(key);
  return v == nullptr ? nullptr : v->AsObject();
}

bool Details::empty() const { return entries_.empty(); }
size_t Details::size() const { return entries_.size(); }
std::vector<Details::Entry>::const_iterator Details::begin() const { return entries_.begin(); }
std::vector<Details::Entry>::const_iterator Details::end() const { return entries_.end(); }
bool Details::operator==(const Details& other) const { return entries_ == other.entries_; }

DetailValue::DetailValue(const std::vector<std::string>& strings) : v_(List(strings.begin(), strings.end())) {}

}  // namespace causeway
