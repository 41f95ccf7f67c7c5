// The console's files, compiled into the binary (cmake/embed_console.cmake
// writes them from console/'s build), so `causeway serve` needs nothing
// beside it and fetches nothing from anywhere.
#pragma once

#include <string_view>

namespace causeway::console {

struct Asset {
  std::string_view path;          // "/", "/assets/app.js", "/assets/app.css"
  std::string_view content_type;
  std::string_view body;
  std::string_view gzip;          // the same, gzip-compressed
  std::string_view etag;          // a quoted strong validator (from the content's SHA-256)
};

// The asset at `path`, or nullptr.
const Asset* FindAsset(std::string_view path);

}  // namespace causeway::console
