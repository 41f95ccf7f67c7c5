#include "causeway/file_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace causeway {

Status WriteAll(int fd, std::string_view data, std::string_view what) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Unavailable("cannot write " + std::string(what) + ": " + std::strerror(n < 0 ? errno : EIO));
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace causeway
