#include "identity/scim/scim_filter.h"

#include <cctype>

#include "causeway/clock.h"

namespace causeway::identity::scim {

using nlohmann::json;

namespace {

constexpr std::string_view kOps[] = {"eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"};

struct Token {
  enum class Kind { kEnd, kWord, kString, kNumber, kOpen, kClose, kOpenBracket, kCloseBracket, kDot };
  Kind kind = Kind::kEnd;
  std::string text;  // the word, or the string's decoded value
  json number;
  size_t at = 0;     // 0-based offset in the input
};

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '$' || c == ':' || c == '.';
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Bounds on a filter or PATCH path, checked before parsing and recursing:
// the IdPs' own filters are a few terms long.
constexpr size_t kMaxFilterBytes = 8 * 1024;
constexpr int kMaxFilterDepth = 16;
constexpr int kMaxFilterTerms = 200;

// Recursive descent over the filter grammar in the header. `scim_type` is
// the error type to report (invalidFilter, or invalidPath for PATCH paths).
class Parser {
 public:
  Parser(const ResourceType& type, std::string_view text, std::string_view scim_type)
      : type_(type), text_(text), scim_type_(scim_type) {}

  Result<Filter> ParseWhole() {
    RETURN_IF_ERROR(Advance());
    ASSIGN_OR_RETURN(Filter f, ParseOr(nullptr));
    if (tok_.kind != Token::Kind::kEnd) return Fail("expected \"and\", \"or\" or the end of the filter");
    return f;
  }

  Result<Path> ParsePathWhole() {
    RETURN_IF_ERROR(Advance());
    if (tok_.kind != Token::Kind::kWord) return Fail("expected an attribute name");
    Path path;
    std::string name = tok_.text;
    RETURN_IF_ERROR(Advance());
    if (tok_.kind != Token::Kind::kOpenBracket) {
      ASSIGN_OR_RETURN(path.attr, Resolve(type_, name, scim_type_));
      if (tok_.kind != Token::Kind::kEnd) return Fail("expected the end of the path");
      return path;
    }
    ASSIGN_OR_RETURN(path.attr, Resolve(type_, name, scim_type_));
    ASSIGN_OR_RETURN(Filter inner, ParseBracket(path.attr));
    path.filter = std::move(inner);
    if (tok_.kind == Token::Kind::kWord && !tok_.text.empty() && tok_.text[0] == '.') {
      std::string sub = tok_.text.substr(1);
      path.attr.sub = FindIn(path.attr.attr->sub, sub);
      if (!path.attr.sub) return Fail("\"" + path.attr.attr->name + "\" has no sub-attribute \"" + sub + "\"");
      RETURN_IF_ERROR(Advance());
    }
    if (tok_.kind != Token::Kind::kEnd) return Fail("expected the end of the path");
    return path;
  }

 private:
  Status Fail(const std::string& what) const {
    return Error(Code::kInvalidArgument, scim_type_,
                 std::string(scim_type_ == "invalidPath" ? "path" : "filter") + " \"" + std::string(text_) +
                     "\": at character " + std::to_string(tok_.at + 1) + ": " + what);
  }

  Status Advance() {
    size_t i = pos_;
    while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t')) ++i;
    tok_ = Token{};
    tok_.at = i;
    if (i >= text_.size()) {
      pos_ = i;
      return Status::Ok();
    }
    char c = text_[i];
    auto single = [&](Token::Kind k) {
      tok_.kind = k;
      pos_ = i + 1;
      return Status::Ok();
    };
    switch (c) {
      case '(': return single(Token::Kind::kOpen);
      case ')': return single(Token::Kind::kClose);
      case '[': return single(Token::Kind::kOpenBracket);
      case ']': return single(Token::Kind::kCloseBracket);
      default: break;
    }
    if (c == '"') {
      // A JSON string: find its end, honouring escapes, and decode it.
      size_t j = i + 1;
      while (j < text_.size() && text_[j] != '"') j += text_[j] == '\\' ? 2 : 1;
      if (j >= text_.size()) return Fail("the string is not closed (a '\"' is missing)");
      json s = json::parse(text_.substr(i, j + 1 - i), nullptr, false);
      if (!s.is_string()) return Fail("malformed string literal");
      tok_.kind = Token::Kind::kString;
      tok_.text = s.get<std::string>();
      pos_ = j + 1;
      return Status::Ok();
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i + 1;
      while (j < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[j])) || text_[j] == '.' ||
                                  text_[j] == 'e' || text_[j] == 'E' || text_[j] == '+' || text_[j] == '-')) {
        ++j;
      }
      json n = json::parse(text_.substr(i, j - i), nullptr, false);
      if (n.is_number()) {
        tok_.kind = Token::Kind::kNumber;
        tok_.number = n;
        pos_ = j;
        return Status::Ok();
      }
    }
    if (IsWordChar(c)) {
      size_t j = i;
      // A word stops before '[': "emails[type eq ...]"; a ".value" after ']'
      // comes as its own word.
      while (j < text_.size() && IsWordChar(text_[j])) ++j;
      tok_.kind = Token::Kind::kWord;
      tok_.text = std::string(text_.substr(i, j - i));
      pos_ = j;
      return Status::Ok();
    }
    return Fail(std::string("unexpected character '") + c + "'");
  }

  bool AtKeyword(std::string_view kw) const { return tok_.kind == Token::Kind::kWord && EqualsIgnoreCase(tok_.text, kw); }

  // `parent`: inside "attr[...]", names are attr's sub-attributes.
  Result<Filter> ParseOr(const AttrRef* parent) {
    return ParseChain(parent, "or", Filter::Kind::kOr, &Parser::ParseAnd);
  }
  Result<Filter> ParseAnd(const AttrRef* parent) {
    return ParseChain(parent, "and", Filter::Kind::kAnd, &Parser::ParseUnary);
  }
  // operand (keyword operand)*, folded to the left.
  Result<Filter> ParseChain(const AttrRef* parent, std::string_view keyword, Filter::Kind kind,
                            Result<Filter> (Parser::*operand)(const AttrRef*)) {
    ASSIGN_OR_RETURN(Filter left, (this->*operand)(parent));
    while (AtKeyword(keyword)) {
      RETURN_IF_ERROR(Advance());
      ASSIGN_OR_RETURN(Filter right, (this->*operand)(parent));
      Filter f;
      f.kind = kind;
      f.children = {std::move(left), std::move(right)};
      left = std::move(f);
    }
    return left;
  }

  Result<Filter> ParseGroup(const AttrRef* parent) {
    RETURN_IF_ERROR(Enter());
    RETURN_IF_ERROR(Advance());  // past '('
    ASSIGN_OR_RETURN(Filter inner, ParseOr(parent));
    --depth_;
    if (tok_.kind != Token::Kind::kClose) return Fail("expected ')'");
    RETURN_IF_ERROR(Advance());
    return inner;
  }

  Result<Filter> ParseBracket(const AttrRef& attr) {
    if (attr.sub || attr.attr->type != Type::kComplex || !attr.attr->multi) {
      return Fail("\"" + attr.attr->name + "\" is not a multi-valued complex attribute, so it takes no [filter]");
    }
    RETURN_IF_ERROR(Enter());
    RETURN_IF_ERROR(Advance());  // past '['
    ASSIGN_OR_RETURN(Filter inner, ParseOr(&attr));
    --depth_;
    if (tok_.kind != Token::Kind::kCloseBracket) return Fail("expected ']'");
    RETURN_IF_ERROR(Advance());
    return inner;
  }

  // Bounds checked before each recursion: how deep groups nest, and how
  // many terms there are (a chain of "or" folds into a tree as deep as its
  // length, which evaluation and destruction walk recursively).
  Status Enter() {
    if (++depth_ > kMaxFilterDepth) {
      return Fail("the filter nests parentheses deeper than the limit of " + std::to_string(kMaxFilterDepth));
    }
    return Status::Ok();
  }

  Result<Filter> ParseUnary(const AttrRef* parent) {
    if (++terms_ > kMaxFilterTerms) {
      return Fail("the filter has more than the limit of " + std::to_string(kMaxFilterTerms) + " terms");
    }
    if (tok_.kind == Token::Kind::kOpen) return ParseGroup(parent);
    if (AtKeyword("not")) {
      RETURN_IF_ERROR(Advance());
      if (tok_.kind != Token::Kind::kOpen) return Fail("expected '(' after \"not\"");
      ASSIGN_OR_RETURN(Filter inner, ParseGroup(parent));
      Filter f;
      f.kind = Filter::Kind::kNot;
      f.children.push_back(std::move(inner));
      return f;
    }
    if (tok_.kind != Token::Kind::kWord) return Fail("expected an attribute name, \"not\" or '('");
    Filter f;
    ASSIGN_OR_RETURN(f.attr, ResolveIn(parent, tok_.text));
    RETURN_IF_ERROR(Advance());
    if (tok_.kind == Token::Kind::kOpenBracket) {
      if (parent) return Fail("a [filter] cannot be nested in another");
      ASSIGN_OR_RETURN(Filter inner, ParseBracket(f.attr));
      f.kind = Filter::Kind::kValuePath;
      if (tok_.kind == Token::Kind::kWord && !tok_.text.empty() && tok_.text[0] == '.') {
        // emails[type eq "work"].value eq "x@y" (Microsoft Entra matches
        // users so): an element the bracket selects whose sub-attribute
        // compares, as emails[type eq "work" and value eq "x@y"].
        Filter compare;
        compare.attr = f.attr;
        std::string sub = tok_.text.substr(1);
        compare.attr.sub = FindIn(f.attr.attr->sub, sub);
        if (!compare.attr.sub) return Fail("\"" + f.attr.attr->name + "\" has no sub-attribute \"" + sub + "\"");
        RETURN_IF_ERROR(Advance());
        RETURN_IF_ERROR(ParseComparison(compare));
        Filter both;
        both.kind = Filter::Kind::kAnd;
        both.children = {std::move(inner), std::move(compare)};
        inner = std::move(both);
      }
      f.children.push_back(std::move(inner));
      return f;
    }
    RETURN_IF_ERROR(ParseComparison(f));
    return f;
  }

  // "pr", or an operator and a value, after f.attr.
  Status ParseComparison(Filter& f) {
    if (AtKeyword("pr")) {
      f.kind = Filter::Kind::kPresent;
      return Advance();
    }
    if (tok_.kind != Token::Kind::kWord) return Fail("expected an operator (eq ne co sw ew gt ge lt le) or \"pr\"");
    f.op = Lower(tok_.text);
    bool known = false;
    for (std::string_view op : kOps) known |= op == f.op;
    if (!known) return Fail("unknown operator \"" + tok_.text + "\": expected eq ne co sw ew gt ge lt le or pr");
    RETURN_IF_ERROR(Advance());
    switch (tok_.kind) {
      case Token::Kind::kString: f.value = tok_.text; break;
      case Token::Kind::kNumber: f.value = tok_.number; break;
      case Token::Kind::kWord:
        if (AtKeyword("true")) f.value = true;
        else if (AtKeyword("false")) f.value = false;
        else if (AtKeyword("null")) f.value = nullptr;
        else return Fail("expected a value: a \"string\", a number, true, false or null");
        break;
      default: return Fail("expected a value: a \"string\", a number, true, false or null");
    }
    RETURN_IF_ERROR(CheckComparable(f));
    return Advance();
  }

  // The attribute `name` names: at the top level, or a sub-attribute of
  // `parent` inside brackets.
  Result<AttrRef> ResolveIn(const AttrRef* parent, const std::string& name) {
    if (!parent) return Resolve(type_, name, scim_type_);
    AttrRef ref = *parent;
    ref.sub = FindIn(parent->attr->sub, name);
    if (!ref.sub) return Fail("\"" + parent->attr->name + "\" has no sub-attribute \"" + name + "\"");
    return ref;
  }

  // Leaf type checks the grammar cannot make: booleans only equal, strings
  // only for co/sw/ew, dates must be dates.
  Status CheckComparable(Filter& f) const {
    const Attribute* leaf = &f.attr.leaf();
    if (leaf->type == Type::kComplex) {
      leaf = FindIn(leaf->sub, "value");
      if (!leaf) return Fail("\"" + f.attr.attr->name + "\" is complex: compare one of its sub-attributes");
    }
    if (f.value.is_null()) {
      if (f.op != "eq" && f.op != "ne") return Fail("null compares only with eq or ne");
      return Status::Ok();
    }
    bool ordering = f.op == "gt" || f.op == "ge" || f.op == "lt" || f.op == "le";
    bool substring = f.op == "co" || f.op == "sw" || f.op == "ew";
    switch (leaf->type) {
      case Type::kBoolean:
        if (!f.value.is_boolean()) return Fail("\"" + leaf->name + "\" is a boolean: compare it with true or false");
        if (ordering || substring) return Fail("a boolean compares only with eq or ne");
        break;
      case Type::kInteger:
      case Type::kDecimal:
        if (!f.value.is_number()) return Fail("\"" + leaf->name + "\" is a number: compare it with a number");
        if (substring) return Fail("a number does not take co, sw or ew");
        break;
      case Type::kDateTime:
        if (!f.value.is_string() || !ParseRfc3339(f.value.get<std::string>()).ok()) {
          return Fail("\"" + leaf->name + "\" is a dateTime: compare it with a string such as \"2026-11-30T12:00:00Z\"");
        }
        break;
      default:
        if (!f.value.is_string()) return Fail("\"" + leaf->name + "\" is a string: compare it with a \"string\"");
        break;
    }
    return Status::Ok();
  }

  const ResourceType& type_;
  std::string_view text_;
  std::string_view scim_type_;
  int depth_ = 0;
  int terms_ = 0;
  size_t pos_ = 0;
  Token tok_;
};

// The values a comparison looks at: the attribute's, flattened over a
// multi-valued attribute; of a complex value, its "value" sub-attribute.
void Collect(const json& v, const Attribute* sub, std::vector<const json*>& out) {
  if (v.is_array()) {
    for (const json& item : v) Collect(item, sub, out);
    return;
  }
  if (v.is_object()) {
    auto it = v.find(sub ? sub->name : "value");
    if (it != v.end()) Collect(*it, nullptr, out);
    return;
  }
  if (!v.is_null()) out.push_back(&v);
}

const json* Lookup(const json& object, const std::string& key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// The values of `ref` in `resource`, or in `element` (one element of a
// multi-valued attribute) inside brackets.
std::vector<const json*> ValuesOf(const AttrRef& ref, const json& resource, const json* element) {
  std::vector<const json*> out;
  if (element) {
    if (const json* v = Lookup(*element, ref.sub->name)) Collect(*v, nullptr, out);
    return out;
  }
  const json* holder = ref.urn.empty() ? &resource : Lookup(resource, ref.urn);
  if (!holder) return out;
  const json* v = Lookup(*holder, ref.attr->name);
  if (!v) return out;
  if (!ref.sub && ref.attr->type != Type::kComplex) {
    Collect(*v, nullptr, out);
  } else {
    Collect(*v, ref.sub, out);
  }
  return out;
}

bool CompareOne(const Filter& f, const Attribute& leaf, const json& v) {
  const std::string& op = f.op;
  if (leaf.type == Type::kBoolean || v.is_boolean()) {
    if (!v.is_boolean() || !f.value.is_boolean()) return false;
    return op == "eq" ? v == f.value : v != f.value;
  }
  int cmp = 0;
  if (v.is_number()) {
    if (!f.value.is_number()) return false;
    double a = v.get<double>(), b = f.value.get<double>();
    cmp = a < b ? -1 : a > b ? 1 : 0;
  } else if (v.is_string()) {
    if (!f.value.is_string()) return false;
    std::string a = v.get<std::string>(), b = f.value.get<std::string>();
    if (leaf.type == Type::kDateTime) {
      auto ta = ParseRfc3339(a), tb = ParseRfc3339(b);
      if (!ta.ok() || !tb.ok()) return false;
      cmp = *ta < *tb ? -1 : *ta > *tb ? 1 : 0;
    } else {
      if (!leaf.case_exact) {
        a = Lower(a);
        b = Lower(b);
      }
      if (op == "co") return a.find(b) != std::string::npos;
      if (op == "sw") return a.compare(0, b.size(), b) == 0;
      if (op == "ew") return a.size() >= b.size() && a.compare(a.size() - b.size(), b.size(), b) == 0;
      cmp = a.compare(b);
    }
  } else {
    return false;
  }
  if (op == "eq") return cmp == 0;
  if (op == "ne") return cmp != 0;
  if (op == "gt") return cmp > 0;
  if (op == "ge") return cmp >= 0;
  if (op == "lt") return cmp < 0;
  if (op == "le") return cmp <= 0;
  return false;
}

bool Eval(const Filter& f, const json& resource, const json* element) {
  switch (f.kind) {
    case Filter::Kind::kAnd: return Eval(f.children[0], resource, element) && Eval(f.children[1], resource, element);
    case Filter::Kind::kOr: return Eval(f.children[0], resource, element) || Eval(f.children[1], resource, element);
    case Filter::Kind::kNot: return !Eval(f.children[0], resource, element);
    case Filter::Kind::kValuePath: {
      const json* holder = f.attr.urn.empty() ? &resource : Lookup(resource, f.attr.urn);
      const json* list = holder ? Lookup(*holder, f.attr.attr->name) : nullptr;
      if (!list || !list->is_array()) return false;
      for (const json& item : *list) {
        if (Eval(f.children[0], resource, &item)) return true;
      }
      return false;
    }
    case Filter::Kind::kPresent: {
      for (const json* v : ValuesOf(f.attr, resource, element)) {
        if (!(v->is_string() && v->get<std::string>().empty())) return true;
      }
      return false;
    }
    case Filter::Kind::kCompare: {
      auto values = ValuesOf(f.attr, resource, element);
      // "ne" holds where "eq" does not, an absent attribute included.
      if (f.op == "ne") {
        Filter eq = f;
        eq.op = "eq";
        return !Eval(eq, resource, element);
      }
      if (f.value.is_null()) return values.empty();
      const Attribute* leaf = &f.attr.leaf();
      if (leaf->type == Type::kComplex) leaf = FindIn(leaf->sub, "value");
      for (const json* v : values) {
        if (CompareOne(f, *leaf, *v)) return true;
      }
      return false;
    }
  }
  return false;
}

}  // namespace

Result<Filter> ParseFilter(const ResourceType& type, std::string_view text) {
  if (text.empty()) return Error(Code::kInvalidArgument, "invalidFilter", "the filter is empty");
  if (text.size() > kMaxFilterBytes) {
    return Error(Code::kInvalidArgument, "invalidFilter", "longer than the limit of " + std::to_string(kMaxFilterBytes) + " bytes");
  }
  return Parser(type, text, "invalidFilter").ParseWhole();
}

bool Matches(const Filter& filter, const json& resource) { return Eval(filter, resource, nullptr); }

bool MatchesElement(const Filter& bracketed, const json& resource, const json& element) {
  return Eval(bracketed, resource, &element);
}

Result<Path> ParsePath(const ResourceType& type, std::string_view text) {
  if (text.empty()) return Error(Code::kInvalidArgument, "invalidPath", "the path is empty");
  if (text.size() > kMaxFilterBytes) {
    return Error(Code::kInvalidArgument, "invalidPath", "longer than the limit of " + std::to_string(kMaxFilterBytes) + " bytes");
  }
  return Parser(type, text, "invalidPath").ParsePathWhole();
}

}  // namespace causeway::identity::scim
