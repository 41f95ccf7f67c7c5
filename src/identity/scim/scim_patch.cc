#include "identity/scim/scim_patch.h"

#include "identity/scim/scim_filter.h"

namespace causeway::identity::scim {

using nlohmann::json;

namespace {

enum class Op { kAdd, kRemove, kReplace };

// The object holding `ref`'s attribute: the resource or its extension
// object, made when `create`; null when absent.
json* HolderOf(json& resource, const AttrRef& ref, bool create) {
  if (ref.urn.empty()) return &resource;
  if (!resource.contains(ref.urn)) {
    if (!create) return nullptr;
    resource[ref.urn] = json::object();
  }
  return &resource[ref.urn];
}

std::string Describe(const AttrRef& ref) {
  std::string s = ref.urn.empty() ? "" : ref.urn + ":";
  s += ref.attr->name;
  if (ref.sub) s += "." + ref.sub->name;
  return s;
}

// The element a filter such as `type eq "work"` describes, for an add
// that found none: {"type": "work"}; null when the filter says more.
json ElementFrom(const Filter& f) {
  if (f.kind != Filter::Kind::kCompare || f.op != "eq" || !f.attr.sub || f.value.is_null()) return nullptr;
  return json{{f.attr.sub->name, f.value}};
}

// Removing from a multi-valued attribute by value, as Entra does for group
// members: {"op": "remove", "path": "members", "value": [{"value": "id"}]}.
void RemoveListed(json& list, const json& value) {
  json listed = value.is_array() ? value : json::array({value});
  json kept = json::array();
  for (const json& item : list) {
    bool drop = false;
    for (const json& l : listed) {
      if (l.is_object() && item.is_object() && l.contains("value") && item.contains("value")) {
        drop |= l["value"] == item["value"];
      } else {
        drop |= l == item;
      }
    }
    if (!drop) kept.push_back(item);
  }
  list = std::move(kept);
}

Status Apply(const ResourceType& type, json& resource, Op op, const Path& path, const json* value) {
  const AttrRef& ref = path.attr;
  if (ref.attr->mutability == Mutability::kReadOnly || ref.leaf().mutability == Mutability::kReadOnly) {
    return Error(Code::kInvalidArgument, "mutability", "attribute \"" + Describe(ref) + "\" is read-only");
  }
  if (ref.attr->mutability == Mutability::kWriteOnly) return Status::Ok();  // the password: never kept
  if (op != Op::kRemove && (!value || value->is_null())) {
    if (op == Op::kReplace && value) return Apply(type, resource, Op::kRemove, path, nullptr);  // null unassigns
    return Error(Code::kInvalidArgument, "invalidSyntax", "the operation on \"" + Describe(ref) + "\" needs a \"value\"");
  }
  json* holder = HolderOf(resource, ref, op != Op::kRemove);
  if (!holder) return Status::Ok();
  const std::string& name = ref.attr->name;

  if (!path.filter && !ref.sub) {
    if (op == Op::kRemove) {
      if (value && ref.attr->multi && holder->contains(name)) {
        RemoveListed((*holder)[name], *value);
        if ((*holder)[name].empty()) holder->erase(name);
      } else {
        holder->erase(name);
      }
      return Status::Ok();
    }
    ASSIGN_OR_RETURN(json v, NormalizeWhole(*ref.attr, *value, Describe(ref)));
    if (op == Op::kAdd && ref.attr->multi && holder->contains(name) && (*holder)[name].is_array()) {
      json& list = (*holder)[name];
      for (json& item : v) {
        bool present = false;
        for (const json& have : list) present |= have == item;
        if (!present) list.push_back(std::move(item));
      }
      return Status::Ok();
    }
    if (op == Op::kAdd && !ref.attr->multi && ref.attr->type == Type::kComplex && holder->contains(name) &&
        (*holder)[name].is_object()) {
      (*holder)[name].update(v);  // add merges sub-attributes
      return Status::Ok();
    }
    (*holder)[name] = std::move(v);
    return Status::Ok();
  }

  if (!ref.attr->multi) {
    // "name.givenName": a sub-attribute of a single complex attribute.
    if (op == Op::kRemove) {
      if (holder->contains(name) && (*holder)[name].is_object()) {
        (*holder)[name].erase(ref.sub->name);
        if ((*holder)[name].empty()) holder->erase(name);
      }
      return Status::Ok();
    }
    ASSIGN_OR_RETURN(json v, NormalizeOne(*ref.sub, *value, Describe(ref)));
    if (!holder->contains(name) || !(*holder)[name].is_object()) (*holder)[name] = json::object();
    (*holder)[name][ref.sub->name] = std::move(v);
    return Status::Ok();
  }

  // Elements of a multi-valued attribute: those the filter selects, or all.
  if (!holder->contains(name) || !(*holder)[name].is_array()) (*holder)[name] = json::array();
  json& list = (*holder)[name];
  std::vector<size_t> selected;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!path.filter || MatchesElement(*path.filter, resource, list[i])) selected.push_back(i);
  }
  if (op == Op::kRemove) {
    json kept = json::array();
    for (size_t i = 0, s = 0; i < list.size(); ++i) {
      bool hit = s < selected.size() && selected[s] == i;
      if (hit) ++s;
      if (!hit) {
        kept.push_back(list[i]);
      } else if (ref.sub) {
        json item = list[i];
        item.erase(ref.sub->name);
        kept.push_back(std::move(item));
      }
    }
    list = std::move(kept);
    if (list.empty()) holder->erase(name);
    return Status::Ok();
  }
  if (selected.empty()) {
    // Only `attr[sub eq v].subAttr` (or `attr.subAttr` on an empty list)
    // says enough to make the element; anything else had to match.
    json element = path.filter ? ElementFrom(*path.filter) : json(json::object());
    if (element.is_null() || !ref.sub) {
      return Error(Code::kInvalidArgument, "noTarget",
                   "no element of \"" + name + "\" matches the path's filter, so there is nothing to change");
    }
    ASSIGN_OR_RETURN(element[ref.sub->name], NormalizeOne(*ref.sub, *value, Describe(ref)));
    list.push_back(std::move(element));
    return Status::Ok();
  }
  for (size_t i : selected) {
    if (ref.sub) {
      ASSIGN_OR_RETURN(list[i][ref.sub->name], NormalizeOne(*ref.sub, *value, Describe(ref)));
    } else {
      ASSIGN_OR_RETURN(json v, NormalizeOne(*ref.attr, *value, Describe(ref)));
      if (op == Op::kAdd) {
        list[i].update(v);
      } else {
        list[i] = std::move(v);
      }
    }
  }
  return Status::Ok();
}

// A path-less add or replace: each key of the value object is a path.
Status ApplyObject(const ResourceType& type, json& resource, Op op, const json& value) {
  if (!value.is_object()) {
    return Error(Code::kInvalidArgument, "invalidSyntax",
                 "an operation without \"path\" needs an object \"value\" of attributes");
  }
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (EqualsIgnoreCase(it.key(), "schemas")) continue;
    if (type.extension && EqualsIgnoreCase(it.key(), type.extension->id) && it->is_object()) {
      for (auto ext = it->begin(); ext != it->end(); ++ext) {
        ASSIGN_OR_RETURN(Path p, ParsePath(type, type.extension->id + ":" + ext.key()));
        RETURN_IF_ERROR(Apply(type, resource, op, p, &*ext));
      }
      continue;
    }
    ASSIGN_OR_RETURN(Path p, ParsePath(type, it.key()));
    // id and meta in a replaced object are the resource's own: ignored.
    if (p.attr.attr->mutability == Mutability::kReadOnly && p.attr.urn.empty() &&
        (p.attr.attr->name == "id" || p.attr.attr->name == "meta")) {
      continue;
    }
    RETURN_IF_ERROR(Apply(type, resource, op, p, &*it));
  }
  return Status::Ok();
}

const json* Field(const json& object, std::string_view key) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (EqualsIgnoreCase(it.key(), key)) return &*it;
  }
  return nullptr;
}

}  // namespace

Result<json> ApplyPatch(const ResourceType& type, json resource, const json& body) {
  if (!body.is_object()) return Error(Code::kInvalidArgument, "invalidSyntax", "the PATCH body must be a JSON object");
  const json* schemas = Field(body, "schemas");
  bool patch_op = false;
  if (schemas && schemas->is_array()) {
    for (const json& s : *schemas) patch_op |= s.is_string() && s.get<std::string>() == kPatchOp;
  }
  if (!patch_op) {
    return Error(Code::kInvalidArgument, "invalidSyntax", "\"schemas\" must be [\"" + std::string(kPatchOp) + "\"]");
  }
  const json* ops = Field(body, "Operations");
  if (!ops || !ops->is_array() || ops->empty()) {
    return Error(Code::kInvalidArgument, "invalidSyntax", "\"Operations\" must be a non-empty array");
  }
  for (size_t i = 0; i < ops->size(); ++i) {
    const json& o = (*ops)[i];
    std::string where = "Operations[" + std::to_string(i) + "]";
    if (!o.is_object()) return Error(Code::kInvalidArgument, "invalidSyntax", where + " must be an object");
    const json* name = Field(o, "op");
    Op op;
    if (name && name->is_string() && EqualsIgnoreCase(name->get<std::string>(), "add")) {
      op = Op::kAdd;
    } else if (name && name->is_string() && EqualsIgnoreCase(name->get<std::string>(), "remove")) {
      op = Op::kRemove;
    } else if (name && name->is_string() && EqualsIgnoreCase(name->get<std::string>(), "replace")) {
      op = Op::kReplace;
    } else {
      return Error(Code::kInvalidArgument, "invalidSyntax", where + ".op must be \"add\", \"remove\" or \"replace\"");
    }
    const json* path = Field(o, "path");
    const json* value = Field(o, "value");
    Status st;
    if (!path || (path->is_string() && path->get<std::string>().empty())) {
      if (op == Op::kRemove) return Error(Code::kInvalidArgument, "noTarget", where + ": \"remove\" needs a \"path\"");
      st = value ? ApplyObject(type, resource, op, *value)
                 : Error(Code::kInvalidArgument, "invalidSyntax", where + " needs a \"value\"");
    } else if (!path->is_string()) {
      st = Error(Code::kInvalidArgument, "invalidPath", where + ".path must be a string");
    } else {
      auto parsed = ParsePath(type, path->get<std::string>());
      st = parsed.ok() ? Apply(type, resource, op, *parsed, value) : parsed.status();
    }
    if (!st.ok()) return Status(st.code(), where + ": " + st.message(), st.diagnostics());
  }
  RETURN_IF_ERROR(CheckRequired(type, resource));
  return resource;
}

}  // namespace causeway::identity::scim
