// Writing a large output file (gigabytes of OCSF JSON lines) cheaply: the
// data goes to the disk directly (O_DIRECT, in aligned 4 MiB blocks, from a
// writer thread so normalizing and writing overlap), not through the page
// cache, where a fresh file on ext4 costs more CPU in block allocation and
// copying than producing the data did. Where the file system refuses
// O_DIRECT (tmpfs), ordinary buffered writes.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "causeway/mutex.h"
#include "causeway/status.h"

namespace causeway::cli {

class BulkFile {
 public:
  static Result<std::unique_ptr<BulkFile>> Create(const std::string& path);
  ~BulkFile();

  // Appends `data`; errors surface from Close.
  void Write(std::string_view data);
  // Writes what is left, then closes; the first error of any write.
  Status Close();

 private:
  struct Block {
    char* data = nullptr;
    size_t size = 0;
  };
  BulkFile(std::string path, int fd, bool direct);
  Block NewBlock();
  void Hand(Block b);  // to the writer thread
  void Loop();
  Status WriteAll(const char* p, size_t n);

  static constexpr size_t kBlock = 4 << 20;
  const std::string path_;
  int fd_;
  bool direct_;
  Block current_;
  Mutex mu_;
  CondVar cv_;
  std::deque<Block> full_ GUARDED_BY(mu_);
  std::deque<Block> free_ GUARDED_BY(mu_);
  bool closing_ GUARDED_BY(mu_) = false;
  Status error_ GUARDED_BY(mu_);
  std::thread writer_;
};

}  // namespace causeway::cli
