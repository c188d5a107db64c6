// The compiler's two kinds of error: a user error (bad or unsupported model; the message names the
// file, node, op and what was expected) and an internal error (a compiler bug: file and line).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace onnxc {

class UserError : public std::runtime_error {
 public:
  explicit UserError(const std::string& msg) : std::runtime_error(msg) {}
};

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& msg) : std::logic_error(msg) {}
};

namespace detail {
// Builds a message with operator<< and throws it when the temporary dies at the end of the statement.
template <class E>
class ErrorBuilder {
 public:
  ErrorBuilder(const char* file, int line) {
    if (file) os_ << "internal error at " << file << ":" << line << ": ";
  }
  template <class T>
  ErrorBuilder& operator<<(const T& v) {
    os_ << v;
    return *this;
  }
  [[noreturn]] ~ErrorBuilder() noexcept(false) { throw E(os_.str()); }

 private:
  std::ostringstream os_;
};
}  // namespace detail

}  // namespace onnxc

// user_check(cond) << "what is wrong";  internal_check(cond) << "what broke";
#define user_check(cond) \
  if (cond) {            \
  } else                 \
    ::onnxc::detail::ErrorBuilder<::onnxc::UserError>(nullptr, 0)
#define user_error ::onnxc::detail::ErrorBuilder<::onnxc::UserError>(nullptr, 0)
#define internal_check(cond) \
  if (cond) {                \
  } else                     \
    ::onnxc::detail::ErrorBuilder<::onnxc::InternalError>(__FILE__, __LINE__)
#define internal_error ::onnxc::detail::ErrorBuilder<::onnxc::InternalError>(__FILE__, __LINE__)
