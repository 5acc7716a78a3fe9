#include "backends/opengl/gl.h"

#include <dlfcn.h>

#include <EGL/eglext.h>

#include "rlx/error.h"
#include "util/strings.h"

namespace rlx::backends::opengl {

Context& Context::get() {
  static Context c;
  return c;
}

Context::Context() { open(); }

void Context::open() {
  auto fail = [&](const std::string& why) { availability_ = {false, why}; };
  lib_ = dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return fail("no EGL library (libEGL.so.1 could not be loaded: install libegl1 and a driver such as libegl-mesa0)");
  auto get_proc = reinterpret_cast<PFNEGLGETPROCADDRESSPROC>(dlsym(lib_, "eglGetProcAddress"));
  if (!get_proc) return fail("libEGL.so.1 has no eglGetProcAddress");
  auto egl = [&](const char* name) { return reinterpret_cast<void*>(get_proc(name)); };
  auto get_platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(egl("eglGetPlatformDisplayEXT"));
  auto initialize = reinterpret_cast<PFNEGLINITIALIZEPROC>(egl("eglInitialize"));
  auto bind_api = reinterpret_cast<PFNEGLBINDAPIPROC>(egl("eglBindAPI"));
  auto choose_config = reinterpret_cast<PFNEGLCHOOSECONFIGPROC>(egl("eglChooseConfig"));
  auto create_context = reinterpret_cast<PFNEGLCREATECONTEXTPROC>(egl("eglCreateContext"));
  make_current_ = reinterpret_cast<PFNEGLMAKECURRENTPROC>(egl("eglMakeCurrent"));
  if (!get_platform_display || !initialize || !bind_api || !choose_config || !create_context || !make_current_)
    return fail("libEGL lacks the surfaceless platform entry points (eglGetPlatformDisplayEXT)");
  // a display without a window system (no X11, no Wayland)
  display_ = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
  EGLint major = 0, minor = 0;
  if (display_ == EGL_NO_DISPLAY || !initialize(display_, &major, &minor)) return fail("no surfaceless EGL display (EGL_MESA_platform_surfaceless)");
  if (!bind_api(EGL_OPENGL_API)) return fail("EGL cannot bind the OpenGL API");
  const EGLint config_attrs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
  EGLConfig config = nullptr;
  EGLint configs = 0;
  choose_config(display_, config_attrs, &config, 1, &configs);  // may be none: surfaceless contexts need no config
  const EGLint ctx_attrs[] = {EGL_CONTEXT_MAJOR_VERSION, 4, EGL_CONTEXT_MINOR_VERSION, 3, EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                              EGL_NONE};
  context_ = create_context(display_, configs ? config : EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, ctx_attrs);
  if (context_ == EGL_NO_CONTEXT) return fail("EGL could not create an OpenGL 4.3 core context");
  if (!make_current_(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_)) return fail("EGL could not make a context current without a surface");
#define RLX_GL_LOAD(type, name)                                                                        \
  gl_.name = reinterpret_cast<type>(egl("gl" #name));                                                  \
  if (!gl_.name) {                                                                                     \
    make_current_(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);                           \
    return fail("the OpenGL driver lacks gl" #name);                                                   \
  }
  RLX_GL_FUNCTIONS(RLX_GL_LOAD)
#undef RLX_GL_LOAD
  auto str = [&](GLenum e) { const GLubyte* s = gl_.GetString(e); return s ? std::string(reinterpret_cast<const char*>(s)) : std::string(); };
  info_.version = str(GL_VERSION), info_.renderer = str(GL_RENDERER), info_.vendor = str(GL_VENDOR);
  GLint n = 0;
  gl_.GetIntegerv(GL_NUM_EXTENSIONS, &n);
  for (GLint i = 0; i < n; ++i) {
    const GLubyte* e = gl_.GetStringi(GL_EXTENSIONS, static_cast<GLuint>(i));
    if (e && std::string(reinterpret_cast<const char*>(e)) == "GL_ARB_gpu_shader_int64") info_.int64 = true;
  }
  gl_.GetIntegerv(GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT, &info_.ssbo_alignment);
  gl_.GetIntegerv(GL_UNIFORM_BUFFER_OFFSET_ALIGNMENT, &info_.ubo_alignment);
  GLint max_ssbo = 0;
  gl_.GetIntegerv(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &max_ssbo);
  info_.max_ssbo_bytes = max_ssbo;
  gl_.GetIntegerv(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, &info_.max_shared_bytes);
  make_current_(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
  if (!info_.int64) return fail(cat(info_.renderer, " (", info_.version, ") lacks GL_ARB_gpu_shader_int64, which the kernels' integer class needs"));
}

Context::Current::Current(Context& c) : lock_(c.mu_), c_(c) {
  if (c_.depth_++ == 0 && !c_.make_current_(c_.display_, EGL_NO_SURFACE, EGL_NO_SURFACE, c_.context_)) {
    --c_.depth_;
    throw Error(ErrorKind::runtime, "opengl: eglMakeCurrent failed");
  }
}
Context::Current::~Current() {
  if (--c_.depth_ == 0) c_.make_current_(c_.display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
}

void Context::check(const char* what) const {
  const GLenum e = gl_.GetError();
  if (e != GL_NO_ERROR) throw Error(ErrorKind::runtime, cat("opengl: ", what, " failed (GL error 0x", std::to_string(e), ")"));
}

}  // namespace rlx::backends::opengl
