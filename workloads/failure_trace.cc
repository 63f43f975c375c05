#include "workloads/failure_trace.h"

#include "sim/util/error.h"
#include "workloads/trace_csv.h"

namespace clustersim {

std::vector<FailureRecord> LoadFailureTrace(const std::string& path, const Cluster& cluster) {
  enum Column { kTime, kNode, kDuration, kGpu };
  LineReader reader(path);
  CsvSplitter splitter;
  std::string_view line;
  while (reader.Next(&line) && line.find_first_not_of(" \t") == std::string_view::npos) {
  }
  if (line.find_first_not_of(" \t") == std::string_view::npos) {
    throw InputError(path, 1, 1, "empty failure trace: expected the header time,node,duration[,gpu]");
  }
  const CsvHeader header(splitter.Split(line, path, reader.line_number()),
                         {"time", "node", "duration", "gpu"}, 3, path, reader.line_number(),
                         "time,node,duration,gpu");
  std::vector<FailureRecord> records;
  while (reader.Next(&line)) {
    if (line.empty()) continue;
    const int64_t n = reader.line_number();
    const std::vector<CsvField>& row = splitter.Split(line, path, n);
    header.CheckWidth(row, line, path, n);
    const CsvFieldParser parse(path, n);
    FailureRecord record;
    record.line = n;
    record.time = parse.NonNegative(row[header.position(kTime)], "time");
    record.node = static_cast<int>(
        parse.Integer(row[header.position(kNode)], "node", 0, cluster.node_count() - 1));
    const CsvField& duration = row[header.position(kDuration)];
    record.duration = parse.NonNegative(duration, "duration");
    if (!(record.duration > 0)) parse.Fail(duration, "duration: expected seconds > 0");
    if (header.position(kGpu) >= 0) {
      const CsvField& gpu = row[header.position(kGpu)];
      if (!CsvFieldParser::IsMissing(gpu.text)) {
        const int count = cluster.node(record.node).gpu_count;
        record.gpu = static_cast<int>(parse.Integer(gpu, "gpu", -1, count - 1));
      }
    }
    records.push_back(record);
  }
  return records;
}

}  // namespace clustersim
