# bench/process.cmake: the supervised-command benchmark (included from
# bench/CMakeLists.txt). Results and how to read them: bench/process_results.md.
add_executable(process_bench ${CMAKE_CURRENT_LIST_DIR}/process_bench.cc)
target_include_directories(process_bench PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(process_bench PRIVATE corral benchmark::benchmark)
