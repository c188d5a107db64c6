# onnxc_gemm_harness: runs one MatMul/Gemm lowering outside kernel emission (gemm_harness.h).
# Shared by tests/codegen/gemm.cmake (gemm_tests) and bench/CMakeLists.txt (gemm_bench).
if(NOT TARGET onnxc_gemm_harness)
  add_library(onnxc_gemm_harness STATIC ${CMAKE_CURRENT_LIST_DIR}/gemm_harness.cpp ${CMAKE_CURRENT_LIST_DIR}/gpu_on_host.cpp)
  target_include_directories(onnxc_gemm_harness PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  # onnxc_codegen links its op lowerings whole-archive, so matmul.cpp's Registrars are kept.
  target_link_libraries(onnxc_gemm_harness PUBLIC onnxc_codegen)
  target_compile_options(onnxc_gemm_harness PRIVATE ${ONNXC_WARNINGS})
endif()
