// SPDX-License-Identifier: GPL-2.0-or-later
// Internal to lib/replay: the parts of libtracefs (1.6) and libtracecmd (1.3)
// the replay module calls.  Their own headers cannot be compiled as C++:
// tracefs.h (which trace-cmd.h includes) passes an int where an enum is
// expected in an inline function, an error in C++.  These declarations are
// the libraries' documented signatures (man tracefs(3), libtracecmd(3)); the
// libraries are linked through pkg-config as usual.  libtraceevent's headers
// (event-parse.h, kbuffer.h) are C++-clean and included directly.

#ifndef ISOLATION_LIB_REPLAY_TRACE_LIBS_H_
#define ISOLATION_LIB_REPLAY_TRACE_LIBS_H_

#include <sched.h>

extern "C" {
#include <event-parse.h>
#include <kbuffer.h>

// libtracefs
struct tracefs_instance;
struct tracefs_cpu;
const char* tracefs_tracing_dir(void);
int tracefs_tracing_dir_is_mounted(bool mount, const char** path);
struct tracefs_instance* tracefs_instance_create(const char* name);
int tracefs_instance_destroy(struct tracefs_instance* instance);
void tracefs_instance_free(struct tracefs_instance* instance);
char* tracefs_instance_get_dir(struct tracefs_instance* instance);
int tracefs_instance_file_write(struct tracefs_instance* instance, const char* file,
                                const char* str);
char* tracefs_instance_file_read(struct tracefs_instance* instance, const char* file, int* psize);
int tracefs_trace_on(struct tracefs_instance* instance);
int tracefs_trace_off(struct tracefs_instance* instance);
int tracefs_event_enable(struct tracefs_instance* instance, const char* system, const char* event);
struct tep_handle* tracefs_local_events(const char* tracing_dir);
struct tracefs_cpu* tracefs_cpu_open(struct tracefs_instance* instance, int cpu, bool nonblock);
void tracefs_cpu_close(struct tracefs_cpu* tcpu);
int tracefs_cpu_read_size(struct tracefs_cpu* tcpu);
int tracefs_cpu_read(struct tracefs_cpu* tcpu, void* buffer, bool nonblock);
int tracefs_cpu_flush(struct tracefs_cpu* tcpu, void* buffer);

// libtracecmd
struct tracecmd_input;
enum { TRACECMD_FL_LOAD_NO_PLUGINS = 1 << 0 };
struct tracecmd_input* tracecmd_open(const char* file, int flags);
void tracecmd_close(struct tracecmd_input* handle);
struct tep_handle* tracecmd_get_tep(struct tracecmd_input* handle);
struct tep_record* tracecmd_read_cpu_first(struct tracecmd_input* handle, int cpu);
void tracecmd_free_record(struct tep_record* record);
int tracecmd_buffer_instances(struct tracecmd_input* handle);
const char* tracecmd_buffer_instance_name(struct tracecmd_input* handle, int indx);
struct tracecmd_input* tracecmd_buffer_instance_handle(struct tracecmd_input* handle, int indx);
int tracecmd_iterate_events(struct tracecmd_input* handle, cpu_set_t* cpus, int cpu_size,
                            int (*callback)(struct tracecmd_input* handle, struct tep_record*, int,
                                            void*),
                            void* callback_data);
void tracecmd_set_loglevel(enum tep_loglevel level);
}

#endif  // ISOLATION_LIB_REPLAY_TRACE_LIBS_H_
