# Included by proto/CMakeLists.txt when the service is built.
#   fusion_cache_proto:   cache.proto (plain protobuf; the cache's record)
#   fusion_service_proto: service.proto + its gRPC stubs (grpc_cpp_plugin)
find_package(gRPC CONFIG REQUIRED)
find_program(FUSIOND_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
find_program(FUSIOND_GRPC_PYTHON_PLUGIN grpc_python_plugin)

set(_pdir ${CMAKE_CURRENT_SOURCE_DIR})
set(_odir ${CMAKE_CURRENT_BINARY_DIR})

add_custom_command(
  OUTPUT ${_odir}/cache.pb.cc ${_odir}/cache.pb.h
  COMMAND protobuf::protoc --cpp_out=${_odir} -I ${_pdir} ${_pdir}/cache.proto
  DEPENDS ${_pdir}/cache.proto ${_pdir}/fusion.proto protobuf::protoc)
add_library(fusion_cache_proto ${_odir}/cache.pb.cc)
target_include_directories(fusion_cache_proto PUBLIC ${_odir} ${_odir}/..)
target_link_libraries(fusion_cache_proto PUBLIC fusion_proto)

add_custom_command(
  OUTPUT ${_odir}/service.pb.cc ${_odir}/service.pb.h
         ${_odir}/service.grpc.pb.cc ${_odir}/service.grpc.pb.h
  COMMAND protobuf::protoc --cpp_out=${_odir} --grpc_out=${_odir}
          --plugin=protoc-gen-grpc=${FUSIOND_GRPC_CPP_PLUGIN}
          -I ${_pdir} ${_pdir}/service.proto
  DEPENDS ${_pdir}/service.proto ${_pdir}/cache.proto ${_pdir}/fusion.proto protobuf::protoc)
add_library(fusion_service_proto ${_odir}/service.pb.cc ${_odir}/service.grpc.pb.cc)
target_include_directories(fusion_service_proto PUBLIC ${_odir} ${_odir}/..)
target_link_libraries(fusion_service_proto PUBLIC fusion_cache_proto gRPC::grpc++)

# The Python package (client/python/fusiond) with its generated modules,
# assembled in <build>/python/fusiond: PYTHONPATH=<build>/python.
if(FUSIOND_GRPC_PYTHON_PLUGIN)
  set(_pyout ${CMAKE_BINARY_DIR}/python/fusiond)
  set(_pysrc ${PROJECT_SOURCE_DIR}/client/python/fusiond)
  file(GLOB _pyfiles CONFIGURE_DEPENDS ${_pysrc}/*.py)
  add_custom_command(
    OUTPUT ${_pyout}/service_pb2.py ${_pyout}/service_pb2_grpc.py
           ${_pyout}/cache_pb2.py ${_pyout}/fusion_pb2.py
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_pyout}
    COMMAND protobuf::protoc --python_out=${_pyout} --grpc_out=${_pyout}
            --plugin=protoc-gen-grpc=${FUSIOND_GRPC_PYTHON_PLUGIN}
            -I ${_pdir} ${_pdir}/fusion.proto ${_pdir}/cache.proto ${_pdir}/service.proto
    # Generated modules import each other as top-level modules; make the
    # imports package-relative so they live inside `fusiond`.
    COMMAND sed -i -E "s/^import (fusion|cache|service)_pb2/from . import \\1_pb2/"
            ${_pyout}/service_pb2.py ${_pyout}/service_pb2_grpc.py ${_pyout}/cache_pb2.py
    DEPENDS ${_pdir}/service.proto ${_pdir}/cache.proto ${_pdir}/fusion.proto
    VERBATIM)
  add_custom_target(fusiond_python ALL
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${_pyfiles} ${_pyout}/
    DEPENDS ${_pyout}/service_pb2.py ${_pyfiles}
    COMMENT "Python package fusiond in ${_pyout}")
endif()
