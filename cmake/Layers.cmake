# The layers (docs/architecture.md draws them), as data: each src/ folder is one
# static library, corral_<layer>, whose links are exactly the arrows below
# (src/CMakeLists.txt makes them from this table and checks nothing else
# was added), and cmake/CheckLayers.cmake fails the build when a file
# includes a header of a layer its own does not reach.
#
# Read "sandbox: core" as "sandbox uses core". Only sandbox links V8 and
# mruby, so client, process, bind and the layers that only reach those do
# not (the front `corral` binary is made of those: apps/corral/README.md).
set(CORRAL_LAYERS core client sandbox process bind pool server mcp daemon)
set(CORRAL_LAYER_USES_core "")
set(CORRAL_LAYER_USES_client core)
set(CORRAL_LAYER_USES_sandbox core)
set(CORRAL_LAYER_USES_process core)
set(CORRAL_LAYER_USES_bind process)
set(CORRAL_LAYER_USES_pool sandbox)
set(CORRAL_LAYER_USES_server pool)
set(CORRAL_LAYER_USES_mcp server bind)
set(CORRAL_LAYER_USES_daemon mcp client)

# The layer each public header (include/corral/<name>.hpp) belongs to.
set(CORRAL_PUBLIC_HEADER_LAYERS
  execution=core failure=core language=core log=core outcome=core
  client=client
  sandbox=sandbox
  process=process
  bind=bind bind_cli11=bind bind_import=bind
  pool=pool
  server=server
  mcp=mcp)
