// Bounds on untrusted input, shared by every parser that reads it: how deep
// a document may nest, what a name may contain, whether text is UTF-8.
// Each check runs in one pass without recursion, before the text reaches a
// parser or serializer that recurses, so a hostile document is refused with
// a message naming the limit instead of exhausting the stack.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "causeway/status.h"

namespace causeway {

// How deep arrays and objects (JSON, YAML flow collections, SCIM filter
// parentheses) may nest in anything that comes from outside. Real job
// specs, SCIM resources and provider answers nest fewer than 12 levels.
inline constexpr int kMaxNesting = 64;

// A byte offset in a text with its 1-based line and column.
struct TextPosition {
  size_t offset = 0;
  int line = 1;
  int column = 1;
};

// The position of `offset` in `text`.
TextPosition PositionOf(std::string_view text, size_t offset);

// nullopt when `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF); else where the first bad byte is.
std::optional<TextPosition> FindInvalidUtf8(std::string_view text);

// OK when no array or object in the JSON `text` nests deeper than
// `max_depth`; kInvalidArgument naming `what`, the limit and the position
// otherwise. Brackets inside strings do not count. Does not validate the
// rest of the syntax: the parser does that afterwards.
Status CheckJsonNesting(std::string_view text, std::string_view what, int max_depth = kMaxNesting);

// The same bound for YAML, whose parser (yaml-cpp) recurses once per level
// of flow collections ([...], {...}), indentation and compact sequences
// ("- - - x"). Quoted scalars, comments and block scalars (| and >) are
// skipped the way YAML reads them; brackets inside a plain scalar (`run:
// echo [x]`) do not count. Conservative: it may count a level YAML would
// not, never the other way round.
Status CheckYamlNesting(std::string_view text, std::string_view what, int max_depth = kMaxNesting);

// A name that reaches the directory, a team, a label, an owner, a Slurm
// account or a log line: 1 to `max_bytes` bytes of UTF-8 with no control
// characters (U+0000-U+001F, U+007F, U+0080-U+009F). kInvalidArgument
// naming `field` otherwise; the message never repeats the value.
Status CheckName(std::string_view value, std::string_view field, size_t max_bytes = 256);

}  // namespace causeway
