# cmake --install: libnumart.a, public headers, the numart tool, a CMake package and numart.pc.
include(CMakePackageConfigHelpers)
install(TARGETS numart EXPORT numartTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/rt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT numartTargets NAMESPACE numart:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/numart)
configure_package_config_file(cmake/numartConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/numartConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/numart)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/numartConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/numartConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/numartConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/numart)
file(RELATIVE_PATH NUMART_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
configure_file(cmake/numart.pc.in ${CMAKE_CURRENT_BINARY_DIR}/numart.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/numart.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
