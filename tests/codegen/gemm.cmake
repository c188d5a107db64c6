# gemm_tests: the MatMul/Gemm lowerings (and the int8 product) against a naive reference. Included by
# tests/codegen/CMakeLists.txt.
include(${CMAKE_CURRENT_LIST_DIR}/gemm_harness.cmake)
add_executable(gemm_tests ${CMAKE_CURRENT_LIST_DIR}/gemm_test.cpp ${CMAKE_CURRENT_LIST_DIR}/gemm_targets_test.cpp
                          ${CMAKE_CURRENT_LIST_DIR}/gemm_int8_test.cpp)
target_link_libraries(gemm_tests PRIVATE onnxc_gemm_harness GTest::gtest_main)
target_compile_options(gemm_tests PRIVATE ${ONNXC_WARNINGS})
gtest_discover_tests(gemm_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS codegen)
