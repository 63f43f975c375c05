#include "sim/util/input_file.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "sim/util/error.h"
#include "sim/util/sha256.h"

namespace clustersim {
namespace {

// zlib's own input buffer for a gzip file: 256 KiB keeps a large trace to few system calls (the
// default, 8 KiB, costs a read per 8 KiB of compressed data).
constexpr unsigned kGzipBufferBytes = 256 * 1024;

bool StartsWithGzipMagic(std::FILE* file) {
  unsigned char magic[2] = {};
  const size_t n = std::fread(magic, 1, 2, file);
  std::rewind(file);
  return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

}  // namespace

InputFile::InputFile(const std::string& path, const char* what) : path_(path) {
  plain_ = std::fopen(path.c_str(), "rb");
  if (!plain_) throw InputError(path, 0, 0, std::string("cannot open ") + what);
  if (!StartsWithGzipMagic(plain_)) return;
  std::fclose(plain_);
  plain_ = nullptr;
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz) throw InputError(path, 0, 0, std::string("cannot open ") + what);
  gzbuffer(gz, kGzipBufferBytes);
  gzip_ = gz;
}

InputFile::~InputFile() {
  if (plain_) std::fclose(plain_);
  if (gzip_) gzclose_r(static_cast<gzFile>(gzip_));
}

size_t InputFile::Read(char* out, size_t size) {
  if (plain_) {
    const size_t n = std::fread(out, 1, size, plain_);
    if (n == 0 && std::ferror(plain_)) throw InputError(path_, 0, 0, "cannot read file");
    bytes_read_ += static_cast<int64_t>(n);
    return n;
  }
  auto gz = static_cast<gzFile>(gzip_);
  const int n = gzread(gz, out, static_cast<unsigned>(std::min<size_t>(size, INT_MAX)));
  int code = Z_OK;
  const char* message = n <= 0 ? gzerror(gz, &code) : nullptr;
  if (n < 0 || (n == 0 && code != Z_OK)) {
    // Z_BUF_ERROR: the compressed data stopped before the end of a member; Z_DATA_ERROR: bad
    // data or a CRC mismatch.
    const std::string offset = std::to_string(bytes_read_);
    if (code == Z_BUF_ERROR) {
      throw InputError(path_, 0, 0,
                       "the gzip data ends early (truncated file?) after " + offset +
                           " bytes of text: expected the rest of the compressed stream");
    }
    throw InputError(path_, 0, 0,
                     "corrupt gzip data after " + offset + " bytes of text (" +
                         (message ? message : "unknown zlib error") +
                         "): expected a valid gzip file");
  }
  bytes_read_ += n;
  return static_cast<size_t>(n);
}

bool IsGzipFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) return false;
  const bool gzip = StartsWithGzipMagic(file);
  std::fclose(file);
  return gzip;
}

std::string ReadFileText(const std::string& path) {
  InputFile in(path);
  std::string text;
  std::vector<char> buffer(1 << 16);
  while (const size_t n = in.Read(buffer.data(), buffer.size())) text.append(buffer.data(), n);
  return text;
}

std::string Sha256OfContent(const std::string& path) {
  InputFile in(path);
  Sha256 hash;
  std::vector<char> buffer(1 << 16);
  while (const size_t n = in.Read(buffer.data(), buffer.size())) hash.Update(buffer.data(), n);
  return hash.HexDigest();
}

}  // namespace clustersim
