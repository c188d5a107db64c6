// Protobuf files on disk, with one clear UserError line for every way a file can be wrong: missing,
// a directory, empty, truncated, too large, or not the expected message at all. Internal header.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace google::protobuf {
class MessageLite;
}

namespace onnxc::frontend {

// The top-level fields of a message kind, enough to walk its wire format without parsing it:
// a truncated file then says which field was cut, and a foreign file fails on its first bytes.
struct WireSchema {
  struct Field {
    int number;
    int wire_type;  // 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
    const char* name;
    bool repeated_scalar = false;  // packed (length-delimited) encoding is allowed too
  };
  const char* what;  // "an ONNX model", "a TensorProto" ...: completes "is not ..."
  std::vector<Field> fields;
};

extern const WireSchema kModelSchema;
extern const WireSchema kTensorSchema;
extern const WireSchema kSequenceSchema;
extern const WireSchema kOptionalSchema;

// Parses `path` into `msg`. `require` lists field numbers the message must have to count as what
// the schema says (e.g. a model's graph). Throws UserError "<path>: ..." on any problem.
void read_proto_file(const std::string& path, google::protobuf::MessageLite& msg, const WireSchema& schema,
                     std::initializer_list<int> require = {});

// The same checks and parse on bytes already in memory; `path` names them in messages.
void parse_proto_bytes(const uint8_t* data, size_t size, const std::string& path, google::protobuf::MessageLite& msg,
                       const WireSchema& schema, std::initializer_list<int> require = {});

// Writes `msg` to `path` through a temporary file in the same folder renamed on success.
void write_proto_file(const google::protobuf::MessageLite& msg, const std::string& path, bool durable = true);

// Runs `write(fd)` on a temporary file beside `path`, then renames it over `path`. On any failure
// (write returns false or throws) the temporary is removed and nothing at `path` changes.
// `durable` also syncs the data to disk before the rename, so a power loss cannot leave an empty
// file behind either (costly for many small files: test data skips it).
void write_file_atomically(const std::string& path, const std::function<bool(int fd)>& write, bool durable = true);

// The folder holding `path` ("." for a bare file name).
std::string parent_dir(const std::string& path);

}  // namespace onnxc::frontend
