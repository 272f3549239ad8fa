import CFFmpeg
import Foundation

/// FFmpeg's libraries, opened with `dlopen` the first time an AAC or ALAC file is decoded, and the
/// functions the decoder calls (why not linked: Sources/CFFmpeg/shim.h). Each function's type is
/// the pointer type of its declaration in FFmpeg's headers. Control side only (load time).
struct FFmpegLibrary: @unchecked Sendable {
    /// Why FFmpeg could not be loaded.
    struct Unavailable: Error, CustomStringConvertible {
        /// What is missing, with the Debian packages that provide it.
        let description: String
    }

    /// The libraries, loaded once per process (never unloaded), or why they are not there.
    static let shared: Result<FFmpegLibrary, Unavailable> = Result { () throws(Unavailable) in try FFmpegLibrary() }

    /// The shared objects the headers were written for (their major versions), dependencies first.
    static let sonames = ["libavutil.so.\(LIBAVUTIL_VERSION_MAJOR)", "libavcodec.so.\(LIBAVCODEC_VERSION_MAJOR)",
                          "libavformat.so.\(LIBAVFORMAT_VERSION_MAJOR)"]

    let av_log_set_level: hapsync_av_log_set_level_fn
    let av_malloc: hapsync_av_malloc_fn
    let av_free: hapsync_av_free_fn
    let av_freep: hapsync_av_freep_fn
    let av_strerror: hapsync_av_strerror_fn
    let av_frame_alloc: hapsync_av_frame_alloc_fn
    let av_frame_free: hapsync_av_frame_free_fn
    let av_frame_unref: hapsync_av_frame_unref_fn
    let av_sample_fmt_is_planar: hapsync_av_sample_fmt_is_planar_fn
    let av_get_packed_sample_fmt: hapsync_av_get_packed_sample_fmt_fn
    let avio_alloc_context: hapsync_avio_alloc_context_fn
    let avio_context_free: hapsync_avio_context_free_fn
    let avformat_alloc_context: hapsync_avformat_alloc_context_fn
    let av_find_input_format: hapsync_av_find_input_format_fn
    let avformat_open_input: hapsync_avformat_open_input_fn
    let avformat_close_input: hapsync_avformat_close_input_fn
    let av_find_best_stream: hapsync_av_find_best_stream_fn
    let av_read_frame: hapsync_av_read_frame_fn
    let avcodec_find_decoder: hapsync_avcodec_find_decoder_fn
    let avcodec_get_name: hapsync_avcodec_get_name_fn
    let avcodec_alloc_context3: hapsync_avcodec_alloc_context3_fn
    let avcodec_free_context: hapsync_avcodec_free_context_fn
    let avcodec_parameters_to_context: hapsync_avcodec_parameters_to_context_fn
    let avcodec_open2: hapsync_avcodec_open2_fn
    let av_packet_alloc: hapsync_av_packet_alloc_fn
    let av_packet_free: hapsync_av_packet_free_fn
    let av_packet_unref: hapsync_av_packet_unref_fn
    let avcodec_send_packet: hapsync_avcodec_send_packet_fn
    let avcodec_receive_frame: hapsync_avcodec_receive_frame_fn

    private init() throws(Unavailable) {
        var handles: [UnsafeMutableRawPointer] = []
        for name in Self.sonames {
            guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
                let why = dlerror().map { String(cString: $0) } ?? name
                throw Unavailable(description: "FFmpeg, which decodes AAC and ALAC, is not installed (\(why); Debian packages libavformat59, libavcodec59, libavutil57)")
            }
            handles.append(handle)
        }
        func symbol<T>(_ name: String) throws(Unavailable) -> T {
            for handle in handles {
                if let p = dlsym(handle, name) { return unsafeBitCast(p, to: T.self) }
            }
            throw Unavailable(description: "FFmpeg's libraries lack \(name) (\(Self.sonames.joined(separator: ", ")))")
        }
        av_log_set_level = try symbol("av_log_set_level")
        av_malloc = try symbol("av_malloc")
        av_free = try symbol("av_free")
        av_freep = try symbol("av_freep")
        av_strerror = try symbol("av_strerror")
        av_frame_alloc = try symbol("av_frame_alloc")
        av_frame_free = try symbol("av_frame_free")
        av_frame_unref = try symbol("av_frame_unref")
        av_sample_fmt_is_planar = try symbol("av_sample_fmt_is_planar")
        av_get_packed_sample_fmt = try symbol("av_get_packed_sample_fmt")
        avio_alloc_context = try symbol("avio_alloc_context")
        avio_context_free = try symbol("avio_context_free")
        avformat_alloc_context = try symbol("avformat_alloc_context")
        av_find_input_format = try symbol("av_find_input_format")
        avformat_open_input = try symbol("avformat_open_input")
        avformat_close_input = try symbol("avformat_close_input")
        av_find_best_stream = try symbol("av_find_best_stream")
        av_read_frame = try symbol("av_read_frame")
        avcodec_find_decoder = try symbol("avcodec_find_decoder")
        avcodec_get_name = try symbol("avcodec_get_name")
        avcodec_alloc_context3 = try symbol("avcodec_alloc_context3")
        avcodec_free_context = try symbol("avcodec_free_context")
        avcodec_parameters_to_context = try symbol("avcodec_parameters_to_context")
        avcodec_open2 = try symbol("avcodec_open2")
        av_packet_alloc = try symbol("av_packet_alloc")
        av_packet_free = try symbol("av_packet_free")
        av_packet_unref = try symbol("av_packet_unref")
        avcodec_send_packet = try symbol("avcodec_send_packet")
        avcodec_receive_frame = try symbol("avcodec_receive_frame")
    }
}
