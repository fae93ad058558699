# SPDX-License-Identifier: GPL-2.0-or-later
# Installs headers, the library, a CMake package (find_package(isolation) +
# isolation::isolation) and a pkg-config file (isolation.pc).
include(CMakePackageConfigHelpers)
set(ISOLATION_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/isolation)

install(TARGETS isolation EXPORT isolationTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# isolation/isolab/isolab.h only with the library it declares (tools/).
if(TARGET isolation_isolab)
  install(DIRECTORY include/isolation DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
else()
  install(DIRECTORY include/isolation DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} PATTERN isolab EXCLUDE)
endif()
install(EXPORT isolationTargets NAMESPACE isolation:: DESTINATION ${ISOLATION_CMAKE_DIR})
configure_package_config_file(cmake/isolationConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/isolationConfig.cmake INSTALL_DESTINATION ${ISOLATION_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/isolationConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/isolationConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/isolationConfigVersion.cmake DESTINATION ${ISOLATION_CMAKE_DIR})

# Relocatable: prefix is computed from the .pc file's own location.
file(RELATIVE_PATH ISOLATION_PC_TO_PREFIX
  /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
# The library's contract checks are PUBLIC: a hardened build tells pkg-config users too.
set(ISOLATION_PC_CFLAGS "")
if(ISOLATION_HARDENED)
  set(ISOLATION_PC_CFLAGS " -DISOLATION_HARDENED=1")
endif()
configure_file(cmake/isolation.pc.in ${CMAKE_CURRENT_BINARY_DIR}/isolation.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/isolation.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

if(TARGET isolation_testing)
  # The conformance kit: its own export set, loaded by isolationConfig.cmake
  # when GoogleTest and Google Benchmark are found (COMPONENTS testing).
  install(TARGETS isolation_testing EXPORT isolationTestingTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT isolationTestingTargets NAMESPACE isolation:: DESTINATION ${ISOLATION_CMAKE_DIR})
  configure_file(cmake/isolation-testing.pc.in ${CMAKE_CURRENT_BINARY_DIR}/isolation-testing.pc @ONLY)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/isolation-testing.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

if(TARGET isolation_isolab)
  # isolab as a library (isolation/isolab/isolab.h): its own export set,
  # loaded by isolationConfig.cmake when present (isolation::isolab).
  install(TARGETS isolation_isolab EXPORT isolationIsolabTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT isolationIsolabTargets NAMESPACE isolation:: DESTINATION ${ISOLATION_CMAKE_DIR})
endif()
