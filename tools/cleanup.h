// What a command leaves behind when it is interrupted: SIGINT, SIGTERM and SIGHUP remove every
// registered folder (staging folders, temporary folders) before the process dies of the signal.
#pragma once

#include <string>

namespace onnxc::tools {

// Once, from main() before any other thread starts: installs the handlers and gives the process
// one private temporary folder, made the process's $TMPDIR, so that whatever codegen, Halide or
// the C compiler put in temporary files lies inside it and goes with it (on exit or a signal).
void install_interrupt_cleanup();

// Folders removed (with their contents) if a signal arrives while they are registered.
void add_cleanup_path(const std::string& path);
void remove_cleanup_path(const std::string& path);

}  // namespace onnxc::tools
