// sim/util/input_file.h: gzip found by its magic bytes (not the name), decompressed content equal
// to what gzip -d gives, concatenated members, truncated and corrupt gzip data reported, and the
// content hash equal for a file and its gzip copy (SHA-256 of "abc" from FIPS 180-4 B.1).
#include "sim/util/input_file.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sim/util/error.h"
#include "sim/util/sha256.h"
#include "tests/test_util.h"

namespace clustersim {
namespace {

using testing::TempPath;

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Compresses `text` as one gzip member with zlib's own writer.
std::string Gzip(const std::string& text) {
  const std::string path = TempPath("gzip-helper.gz");
  gzFile gz = gzopen(path.c_str(), "wb");
  EXPECT_NE(gz, nullptr);
  EXPECT_EQ(gzwrite(gz, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  EXPECT_EQ(gzclose(gz), Z_OK);
  return ReadBytes(path);
}

std::string ErrorOf(const std::string& path) {
  try {
    ReadFileText(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(InputFile, PlainFilesAreReadAsTheyAre) {
  const std::string path = TempPath("plain.txt");
  WriteBytes(path, "a,b\n1,2\n");
  EXPECT_FALSE(IsGzipFile(path));
  EXPECT_EQ(ReadFileText(path), "a,b\n1,2\n");
  InputFile in(path);
  EXPECT_FALSE(in.is_gzip());
}

TEST(InputFile, GzipIsFoundByItsMagicBytesWhateverTheName) {
  const std::string text = "job_id,submit_time,gpus,duration\nj1,0,1,10\n";
  const std::string path = TempPath("looks_plain.csv");  // no .gz
  WriteBytes(path, Gzip(text));
  EXPECT_EQ(ReadBytes(path).substr(0, 2), "\x1f\x8b");
  EXPECT_TRUE(IsGzipFile(path));
  EXPECT_EQ(ReadFileText(path), text);
  // And a plain file named .gz is plain.
  const std::string named = TempPath("plain.csv.gz");
  WriteBytes(named, text);
  EXPECT_FALSE(IsGzipFile(named));
  EXPECT_EQ(ReadFileText(named), text);
}

TEST(InputFile, SmallReadsSeeTheSameBytesAsOneLargeRead) {
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "line " + std::to_string(i) + "\n";
  const std::string path = TempPath("big.gz");
  WriteBytes(path, Gzip(text));
  InputFile in(path);
  std::string read;
  char buffer[7];
  while (const size_t n = in.Read(buffer, sizeof buffer)) read.append(buffer, n);
  EXPECT_EQ(read, text);
  EXPECT_EQ(in.bytes_read(), static_cast<int64_t>(text.size()));
}

TEST(InputFile, ConcatenatedMembersAreReadOneAfterAnother) {
  // RFC 1952 §2.2: a gzip file is a series of members; gzip -d outputs them concatenated.
  const std::string path = TempPath("two_members.gz");
  WriteBytes(path, Gzip("first\n") + Gzip("second\n"));
  EXPECT_EQ(ReadFileText(path), "first\nsecond\n");
}

TEST(InputFile, TruncatedGzipIsAnErrorNotAShortFile) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += std::to_string(i * 7919 % 10007) + "\n";
  const std::string whole = Gzip(text);
  const std::string path = TempPath("truncated.gz");
  WriteBytes(path, whole.substr(0, whole.size() / 2));
  const std::string error = ErrorOf(path);
  EXPECT_NE(error.find(path + ": the gzip data ends early (truncated file?)"), std::string::npos)
      << error;
  // Cut inside the 8-byte trailer (CRC-32, size): all the text is there but not the check.
  WriteBytes(path, whole.substr(0, whole.size() - 4));
  EXPECT_NE(ErrorOf(path).find("ends early"), std::string::npos) << ErrorOf(path);
}

TEST(InputFile, CorruptGzipIsAnError) {
  const std::string text(5000, 'x');
  std::string bytes = Gzip(text);
  // Flip the stored CRC-32 (the trailer's first 4 bytes, RFC 1952 §2.3.1).
  bytes[bytes.size() - 8] = static_cast<char>(bytes[bytes.size() - 8] ^ 0xff);
  const std::string path = TempPath("bad_crc.gz");
  WriteBytes(path, bytes);
  EXPECT_NE(ErrorOf(path).find("corrupt gzip data"), std::string::npos) << ErrorOf(path);
  // Only the magic bytes: a gzip header that stops at once.
  WriteBytes(path, "\x1f\x8b");
  EXPECT_NE(ErrorOf(path), "");
}

TEST(InputFile, MissingFileNamesWhatCouldNotBeOpened) {
  try {
    InputFile in(TempPath("no_such_file"), "trace file");
    FAIL() << "opened a missing file";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open trace file"), std::string::npos);
  }
}

TEST(InputFile, ContentHashIsTheSameForAFileAndItsGzipCopy) {
  const std::string plain = TempPath("abc.txt"), gz = TempPath("abc.txt.gz");
  WriteBytes(plain, "abc");
  WriteBytes(gz, Gzip("abc"));
  // FIPS 180-4, example B.1.
  const std::string kAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  EXPECT_EQ(Sha256OfContent(plain), kAbc);
  EXPECT_EQ(Sha256OfContent(gz), kAbc);
}

// FIPS 180-2 appendix B (B.1 "abc", B.2 the 448-bit message, B.3 a million 'a') and the empty
// message; the million 'a' fed in odd-sized pieces too, so that blocks are completed from the
// carried-over buffer as well as taken whole.
TEST(Sha256, MatchesThePublishedExamples) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  const std::string million(1'000'000, 'a');
  const std::string kMillion = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  EXPECT_EQ(Sha256Hex(million), kMillion);
  Sha256 pieces;
  for (size_t at = 0, step = 1; at < million.size(); at += step, step = step % 200 + 7) {
    pieces.Update(std::string_view(million).substr(at, step));
  }
  EXPECT_EQ(pieces.HexDigest(), kMillion);
}

}  // namespace
}  // namespace clustersim
