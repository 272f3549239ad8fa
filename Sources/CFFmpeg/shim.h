// FFmpeg's demuxers and decoders (libavformat, libavcodec, libavutil), for the audio Core Haptics
// plays that libsndfile does not read: AAC and ALAC, in M4A/MP4 and CAF.
//
// Headers only, nothing linked: FFmpeg pulls in some hundred shared libraries (video codecs
// among them), which a process that plays no AAC should neither load nor, once `play` has called
// mlockall, keep resident (about 170 MB). FFmpegLibrary opens the libraries with dlopen the
// first time an AAC or ALAC file is decoded and looks up the functions below; their pointer
// types come from the declarations themselves, so they cannot drift from the headers.
#include <errno.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavformat/version_major.h>
#include <libavcodec/avcodec.h>
#include <libavcodec/version_major.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/samplefmt.h>
#include <libavutil/version.h>

// FFmpeg's error codes are function-like macros (AVERROR(e), FFERRTAG for AVERROR_EOF), which
// Swift does not import: the ones the decoder compares against, as inline functions.
static inline int hapsync_averror_eof(void) { return AVERROR_EOF; }
static inline int hapsync_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int hapsync_averror_errno(int e) { return AVERROR(e); }

// Pointer types of the functions FFmpegLibrary looks up (hapsync_NAME_fn for NAME).
#define HAPSYNC_FFMPEG_FUNCTION(name) typedef __typeof__(&name) hapsync_##name##_fn;
HAPSYNC_FFMPEG_FUNCTION(av_log_set_level)
HAPSYNC_FFMPEG_FUNCTION(av_malloc)
HAPSYNC_FFMPEG_FUNCTION(av_free)
HAPSYNC_FFMPEG_FUNCTION(av_freep)
HAPSYNC_FFMPEG_FUNCTION(av_strerror)
HAPSYNC_FFMPEG_FUNCTION(av_frame_alloc)
HAPSYNC_FFMPEG_FUNCTION(av_frame_free)
HAPSYNC_FFMPEG_FUNCTION(av_frame_unref)
HAPSYNC_FFMPEG_FUNCTION(av_sample_fmt_is_planar)
HAPSYNC_FFMPEG_FUNCTION(av_get_packed_sample_fmt)
HAPSYNC_FFMPEG_FUNCTION(avio_alloc_context)
HAPSYNC_FFMPEG_FUNCTION(avio_context_free)
HAPSYNC_FFMPEG_FUNCTION(avformat_alloc_context)
HAPSYNC_FFMPEG_FUNCTION(av_find_input_format)
HAPSYNC_FFMPEG_FUNCTION(avformat_open_input)
HAPSYNC_FFMPEG_FUNCTION(avformat_close_input)
HAPSYNC_FFMPEG_FUNCTION(av_find_best_stream)
HAPSYNC_FFMPEG_FUNCTION(av_read_frame)
HAPSYNC_FFMPEG_FUNCTION(avcodec_find_decoder)
HAPSYNC_FFMPEG_FUNCTION(avcodec_get_name)
HAPSYNC_FFMPEG_FUNCTION(avcodec_alloc_context3)
HAPSYNC_FFMPEG_FUNCTION(avcodec_free_context)
HAPSYNC_FFMPEG_FUNCTION(avcodec_parameters_to_context)
HAPSYNC_FFMPEG_FUNCTION(avcodec_open2)
HAPSYNC_FFMPEG_FUNCTION(av_packet_alloc)
HAPSYNC_FFMPEG_FUNCTION(av_packet_free)
HAPSYNC_FFMPEG_FUNCTION(av_packet_unref)
HAPSYNC_FFMPEG_FUNCTION(avcodec_send_packet)
HAPSYNC_FFMPEG_FUNCTION(avcodec_receive_frame)
#undef HAPSYNC_FFMPEG_FUNCTION
