// tests/sandbox/seeded_hash.cc: prints the hash V8 gives the string
// "corral" in an isolate made as corral's engine makes one, so that
// snapshot_test can compare hash seeds across processes.
//
//   seeded_hash private   this process's own snapshot (corral's default)
//   seeded_hash public    V8's built-in snapshot, not rehashed: the seed
//                         compiled into the library, the same everywhere
#include <v8.h>

#include <cstdio>
#include <cstring>
#include <memory>

#include "sandbox/v8/platform.hpp"

int main(int argc, char** argv) {
  using namespace corral::sandbox::v8engine;
  const bool public_seed = argc > 1 && std::strcmp(argv[1], "public") == 0;
  if (public_seed) {
    set_private_snapshot(false);
    const char flag[] = "--no-rehash-snapshot";
    v8::V8::SetFlagsFromString(flag, sizeof(flag) - 1);
  }
  ensure_v8();
  std::unique_ptr<v8::ArrayBuffer::Allocator> allocator(
      v8::ArrayBuffer::Allocator::NewDefaultAllocator());
  v8::Isolate::CreateParams params;
  params.array_buffer_allocator = allocator.get();
  params.snapshot_blob = private_snapshot();
  if (!public_seed && !params.snapshot_blob) return 2;
  v8::Isolate* isolate = v8::Isolate::New(params);
  {
    v8::Isolate::Scope isolate_scope(isolate);
    v8::HandleScope handles(isolate);
    v8::Local<v8::Context> context = v8::Context::New(isolate);
    v8::Context::Scope context_scope(context);
    // A lookup through the snapshot's own tables: it fails if they were
    // hashed under another seed than the isolate's.
    v8::Local<v8::Value> math;
    if (!context->Global()
             ->Get(context, v8::String::NewFromUtf8Literal(isolate, "Math"))
             .ToLocal(&math) ||
        !math->IsObject())
      return 3;
    std::printf("%d\n", v8::String::NewFromUtf8Literal(isolate, "corral")->GetIdentityHash());
  }
  isolate->Dispose();
  return 0;
}
