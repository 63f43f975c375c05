// Reading input files (traces, JSON specs and catalogs) as a stream of bytes, gzip or not.
// A file whose first two bytes are the gzip magic number 1f 8b (RFC 1952 §2.3.1) is decompressed
// as it is read, whatever its name; any other file is read as it is. Concatenated gzip members
// are read one after another (as gzip -d does). Everything downstream (line and column numbers,
// the NUL-byte check, the trace's SHA-256) sees the decompressed text.
#ifndef CLUSTERSIM_SIM_UTIL_INPUT_FILE_H_
#define CLUSTERSIM_SIM_UTIL_INPUT_FILE_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace clustersim {

class InputFile {
 public:
  // Opens `path`. Throws InputError "cannot open <what>" if it cannot be opened (`what` names
  // the kind of file in the message: "trace file", "file").
  explicit InputFile(const std::string& path, const char* what = "file");
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Reads up to `size` bytes of the (decompressed) content into `out`; returns how many, 0 at
  // the end. Throws InputError for gzip data that is corrupt or ends before its end marker (a
  // truncated download), naming the offset in the decompressed text reached so far.
  size_t Read(char* out, size_t size);

  bool is_gzip() const { return gzip_ != nullptr; }
  // Bytes of content returned by Read so far.
  int64_t bytes_read() const { return bytes_read_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* plain_ = nullptr;
  void* gzip_ = nullptr;  // gzFile; void* keeps <zlib.h> out of this header
  int64_t bytes_read_ = 0;
};

// Returns true if the file at `path` starts with the gzip magic number (false if it cannot be
// read).
bool IsGzipFile(const std::string& path);

// Reads the whole (decompressed) content of a file. Throws InputError when it cannot be read.
std::string ReadFileText(const std::string& path);

// The lowercase hex SHA-256 of the file's decompressed content, so a trace and its .gz copy have
// one hash. Throws InputError when it cannot be read.
std::string Sha256OfContent(const std::string& path);

}  // namespace clustersim

#endif  // CLUSTERSIM_SIM_UTIL_INPUT_FILE_H_
