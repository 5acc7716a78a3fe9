// OpenGL 4.3+ compute without a display: libEGL opened at run time, a surfaceless display
// (EGL_MESA_platform_surfaceless, as Mesa's llvmpipe and NVIDIA's EGL offer it), a core context,
// and the GL entry points compute needs, loaded through eglGetProcAddress. GL contexts belong to
// one thread at a time: every use takes the context's lock and makes it current (Current).
#pragma once
#include <EGL/egl.h>
#include <GL/glcorearb.h>

#include <mutex>
#include <string>

#include "runtime/backend.h"

namespace rlx::backends::opengl {

struct Gl {
#define RLX_GL_FUNCTIONS(X)                                                                                                                                    \
  X(PFNGLGETSTRINGPROC, GetString)                                                                                                                             \
  X(PFNGLGETSTRINGIPROC, GetStringi)                                                                                                                           \
  X(PFNGLGETINTEGERVPROC, GetIntegerv)                                                                                                                         \
  X(PFNGLGETERRORPROC, GetError)                                                                                                                               \
  X(PFNGLCREATESHADERPROC, CreateShader)                                                                                                                       \
  X(PFNGLSHADERSOURCEPROC, ShaderSource)                                                                                                                       \
  X(PFNGLCOMPILESHADERPROC, CompileShader)                                                                                                                     \
  X(PFNGLGETSHADERIVPROC, GetShaderiv)                                                                                                                         \
  X(PFNGLGETSHADERINFOLOGPROC, GetShaderInfoLog)                                                                                                               \
  X(PFNGLDELETESHADERPROC, DeleteShader)                                                                                                                       \
  X(PFNGLCREATEPROGRAMPROC, CreateProgram)                                                                                                                     \
  X(PFNGLATTACHSHADERPROC, AttachShader)                                                                                                                       \
  X(PFNGLLINKPROGRAMPROC, LinkProgram)                                                                                                                         \
  X(PFNGLGETPROGRAMIVPROC, GetProgramiv)                                                                                                                       \
  X(PFNGLGETPROGRAMINFOLOGPROC, GetProgramInfoLog)                                                                                                             \
  X(PFNGLDELETEPROGRAMPROC, DeleteProgram)                                                                                                                     \
  X(PFNGLUSEPROGRAMPROC, UseProgram)                                                                                                                           \
  X(PFNGLGENBUFFERSPROC, GenBuffers)                                                                                                                           \
  X(PFNGLDELETEBUFFERSPROC, DeleteBuffers)                                                                                                                     \
  X(PFNGLBINDBUFFERPROC, BindBuffer)                                                                                                                           \
  X(PFNGLBUFFERDATAPROC, BufferData)                                                                                                                           \
  X(PFNGLBUFFERSUBDATAPROC, BufferSubData)                                                                                                                     \
  X(PFNGLGETBUFFERSUBDATAPROC, GetBufferSubData)                                                                                                               \
  X(PFNGLCLEARBUFFERSUBDATAPROC, ClearBufferSubData)                                                                                                           \
  X(PFNGLCOPYBUFFERSUBDATAPROC, CopyBufferSubData)                                                                                                             \
  X(PFNGLBINDBUFFERRANGEPROC, BindBufferRange)                                                                                                                 \
  X(PFNGLDISPATCHCOMPUTEPROC, DispatchCompute)                                                                                                                 \
  X(PFNGLMEMORYBARRIERPROC, MemoryBarrier)                                                                                                                     \
  X(PFNGLFINISHPROC, Finish)
#define RLX_GL_DECLARE(type, name) type name = nullptr;
  RLX_GL_FUNCTIONS(RLX_GL_DECLARE)
#undef RLX_GL_DECLARE
};

// What the context offers compute kernels.
struct GlInfo {
  std::string version, renderer, vendor;
  bool int64 = false;  // GL_ARB_gpu_shader_int64
  GLint ssbo_alignment = 256, ubo_alignment = 256;
  GLint64 max_ssbo_bytes = 0;
  GLint max_shared_bytes = 32768;  // GL's minimum for compute shared memory
};

class Context {
 public:
  static Context& get();
  const runtime::Availability& availability() const { return availability_; }
  const GlInfo& info() const { return info_; }
  const Gl& gl() const { return gl_; }
  // Makes the context current on this thread for the scope, holding its lock.
  class Current {
   public:
    explicit Current(Context& c);
    ~Current();

   private:
    std::unique_lock<std::recursive_mutex> lock_;
    Context& c_;
  };
  // Throws rlx::Error(runtime) naming `what` when GL reported an error since the last check.
  void check(const char* what) const;

 private:
  Context();
  void open();  // fills availability_ with why not, where it fails
  runtime::Availability availability_;
  GlInfo info_;
  Gl gl_;
  void* lib_ = nullptr;
  EGLDisplay display_ = EGL_NO_DISPLAY;
  EGLContext context_ = EGL_NO_CONTEXT;
  std::recursive_mutex mu_;
  int depth_ = 0;  // nested Currents: the outermost makes the context current and releases it
  // EGL entry points
  PFNEGLMAKECURRENTPROC make_current_ = nullptr;
};

}  // namespace rlx::backends::opengl
