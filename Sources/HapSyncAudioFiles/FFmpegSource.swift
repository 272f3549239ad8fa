import CFFmpeg
import Foundation
import HapSyncAHAP

/// FFmpeg (libavformat + libavcodec, loaded on first use: `FFmpegLibrary`) decoding AAC, ALAC and
/// MP3 in M4A/MP4 and CAF from an already open (regular, checked) file. Control side only (load time).
///
/// FFmpeg opens nothing itself: it reads through a custom I/O context over the one descriptor
/// (no protocols, so no other file or URL a hostile container names is ever opened), the demuxer
/// is the one the header named (`mov` or `caf`, never probed), and only the AAC, ALAC and MP3
/// decoders are used. Decoded frames of any sample format are converted to interleaved float.
/// Decoder priming is dropped by FFmpeg (edit lists); the caller stops at the header's length,
/// which drops the padding.
final class FFmpegSource: AudioFrameSource {
    private(set) var channels = 0
    private(set) var sampleRate = 0
    private let path: String
    private let file: FileHandle
    private let ff: FFmpegLibrary
    private var io: UnsafeMutablePointer<AVIOContext>?
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var streamIndex: Int32 = -1
    /// Frames decoded but not yet returned, interleaved.
    private var pending: [Float] = []
    private var pendingOffset = 0
    private var draining = false
    private var finished = false

    /// Size of the I/O context's read buffer.
    private static let ioBufferBytes = 64 << 10

    init(_ file: FileHandle, info: AudioFileInfo, path: String) throws(AudioFileDecoder.LoadError) {
        self.file = file
        self.path = path
        switch FFmpegLibrary.shared {
        case .success(let library): ff = library
        case .failure(let missing): throw .unreadable(path: path, reason: missing.description)
        }
        ff.av_log_set_level(AV_LOG_QUIET)  // errors are reported through return codes, with the file's name
        guard let buffer = ff.av_malloc(Self.ioBufferBytes) else { throw .unreadable(path: path, reason: "FFmpeg could not allocate its reader") }
        guard let io = ff.avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(Self.ioBufferBytes), 0,
                                          UnsafeMutableRawPointer(bitPattern: Int(file.fileDescriptor) + 1), Self.readPacket, nil, Self.seek) else {
            ff.av_free(buffer)
            throw .unreadable(path: path, reason: "FFmpeg could not allocate its reader")
        }
        self.io = io
        format = ff.avformat_alloc_context()
        guard let format else { throw .unreadable(path: path, reason: "FFmpeg could not allocate its demuxer") }
        format.pointee.pb = io
        format.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        let demuxerName = info.format == .caf ? "caf" : "mov"
        guard let demuxer = ff.av_find_input_format(demuxerName) else { throw .unreadable(path: path, reason: "this FFmpeg has no \(demuxerName) demuxer") }
        var opened: UnsafeMutablePointer<AVFormatContext>? = format
        var rc = ff.avformat_open_input(&opened, nil, demuxer, nil)
        guard rc >= 0 else {
            self.format = nil  // avformat_open_input freed it
            throw failure(rc, path, "cannot read its \(info.format.rawValue) container")
        }
        self.format = opened
        streamIndex = ff.av_find_best_stream(opened, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        guard streamIndex >= 0, let stream = opened?.pointee.streams[Int(streamIndex)], let parameters = stream.pointee.codecpar else {
            throw .unreadable(path: path, reason: "FFmpeg finds no audio track in it")
        }
        let id = parameters.pointee.codec_id
        guard id == AV_CODEC_ID_AAC || id == AV_CODEC_ID_ALAC || id == AV_CODEC_ID_MP3, let decoder = ff.avcodec_find_decoder(id) else {
            throw .unreadable(path: path, reason: "its audio track is encoded as \(codecName(id)), which HapSync does not play")
        }
        codec = ff.avcodec_alloc_context3(decoder)
        guard let codec else { throw .unreadable(path: path, reason: "FFmpeg could not allocate its decoder") }
        rc = ff.avcodec_parameters_to_context(codec, parameters)
        guard rc >= 0 else { throw failure(rc, path, "cannot set up its decoder") }
        codec.pointee.pkt_timebase = stream.pointee.time_base
        codec.pointee.thread_count = 1
        rc = ff.avcodec_open2(codec, decoder, nil)
        guard rc >= 0 else { throw failure(rc, path, "cannot open its \(codecName(id)) decoder") }
        packet = ff.av_packet_alloc()
        frame = ff.av_frame_alloc()
        guard packet != nil, frame != nil else { throw .unreadable(path: path, reason: "FFmpeg could not allocate its buffers") }
        // The first frame fixes the channel count and rate (HE-AAC's real rate shows only here).
        guard try decodeFrame() else { throw .empty(path: path) }
    }

    deinit {
        ff.av_frame_free(&frame)
        ff.av_packet_free(&packet)
        ff.avcodec_free_context(&codec)
        ff.avformat_close_input(&format)
        if io != nil { ff.av_freep(&io!.pointee.buffer) }
        ff.avio_context_free(&io)
    }

    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileDecoder.LoadError) -> Int {
        var done = 0
        while done < frames {
            if pendingOffset == pending.count {
                guard try decodeFrame() else { break }
            }
            let n = min(frames - done, (pending.count - pendingOffset) / channels)
            pending.withUnsafeBufferPointer { p in
                (buffer + done * channels).update(from: p.baseAddress! + pendingOffset, count: n * channels)
            }
            pendingOffset += n * channels
            done += n
        }
        return done
    }

    /// Decodes the next frame into `pending`; false at the end of the audio.
    private func decodeFrame() throws(AudioFileDecoder.LoadError) -> Bool {
        guard let format, let codec, let packet, let frame else { return false }
        while !finished {
            let received = ff.avcodec_receive_frame(codec, frame)
            if received == 0 {
                defer { ff.av_frame_unref(frame) }
                guard frame.pointee.nb_samples > 0 else { continue }
                try take(frame)
                return true
            }
            if received == hapsync_averror_eof() {
                finished = true
                break
            }
            guard received == hapsync_averror_eagain() else { throw failure(received, path, "cannot decode it") }
            if draining { finished = true; break }
            let rc = ff.av_read_frame(format, packet)
            if rc == hapsync_averror_eof() {
                draining = true
                _ = ff.avcodec_send_packet(codec, nil)
                continue
            }
            guard rc >= 0 else { throw failure(rc, path, "cannot read it") }
            defer { ff.av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            let sent = ff.avcodec_send_packet(codec, packet)
            guard sent >= 0 || sent == hapsync_averror_eagain() else { throw failure(sent, path, "cannot decode it") }
        }
        return false
    }

    /// Converts a decoded frame, of any sample format, to interleaved float in `pending`.
    private func take(_ frame: UnsafeMutablePointer<AVFrame>) throws(AudioFileDecoder.LoadError) {
        let n = Int(frame.pointee.nb_samples), c = Int(frame.pointee.ch_layout.nb_channels), rate = Int(frame.pointee.sample_rate)
        if channels == 0 {
            guard c > 0, c <= AudioFileInfo.maxChannels, rate > 0, rate <= AudioFileInfo.maxSampleRate else {
                throw .unreadable(path: path, reason: "it decodes to \(c) channels at \(rate) Hz")
            }
            channels = c
            sampleRate = rate
        }
        guard c == channels, rate == sampleRate else {
            throw .unreadable(path: path, reason: "its channels or rate change mid-stream (\(channels) → \(c), \(sampleRate) → \(rate) Hz)")
        }
        guard let planes = frame.pointee.extended_data else { throw .unreadable(path: path, reason: "FFmpeg returned a frame without data") }
        let sampleFormat = AVSampleFormat(rawValue: frame.pointee.format)
        let planar = ff.av_sample_fmt_is_planar(sampleFormat) != 0
        pending.removeAll(keepingCapacity: true)
        pending.reserveCapacity(n * c)
        pendingOffset = 0
        func convert<T>(_ type: T.Type, _ value: (T) -> Float) {
            for i in 0..<n {
                for ch in 0..<c {
                    let base = UnsafeRawPointer(planes[planar ? ch : 0]!).assumingMemoryBound(to: T.self)
                    pending.append(value(base[planar ? i : i * c + ch]))
                }
            }
        }
        switch ff.av_get_packed_sample_fmt(sampleFormat) {
        case AV_SAMPLE_FMT_FLT: convert(Float.self) { $0 }
        case AV_SAMPLE_FMT_DBL: convert(Double.self) { Float($0) }
        case AV_SAMPLE_FMT_S16: convert(Int16.self) { Float($0) / 32_768 }
        case AV_SAMPLE_FMT_S32: convert(Int32.self) { Float(Double($0) / 2_147_483_648) }
        case AV_SAMPLE_FMT_S64: convert(Int64.self) { Float(Double($0) / 9_223_372_036_854_775_808) }
        case AV_SAMPLE_FMT_U8: convert(UInt8.self) { (Float($0) - 128) / 128 }
        default: throw .unreadable(path: path, reason: "FFmpeg decoded it to an unknown sample format \(sampleFormat.rawValue)")
        }
    }

    private func codecName(_ id: AVCodecID) -> String {
        ff.avcodec_get_name(id).map { String(cString: $0) } ?? "codec \(id.rawValue)"
    }

    private func failure(_ code: Int32, _ path: String, _ what: String) -> AudioFileDecoder.LoadError {
        var text = [CChar](repeating: 0, count: 128)
        _ = ff.av_strerror(code, &text, text.count)
        return .unreadable(path: path, reason: "\(what) (FFmpeg: \(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))")
    }

    /// The descriptor behind the I/O context's opaque pointer (stored as fd + 1, never null).
    private static func descriptor(_ opaque: UnsafeMutableRawPointer?) -> Int32 { Int32(Int(bitPattern: opaque) - 1) }

    /// FFmpeg's read callback: `read(2)` on the descriptor, EINTR retried, end of file as AVERROR_EOF.
    private static let readPacket: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = { opaque, buffer, size in
        while true {
            let n = Foundation.read(descriptor(opaque), buffer, Int(size))
            if n > 0 { return Int32(n) }
            if n == 0 { return hapsync_averror_eof() }
            if errno != EINTR { return hapsync_averror_errno(errno) }
        }
    }

    /// FFmpeg's seek callback: `lseek(2)`, or the file's size for AVSEEK_SIZE.
    private static let seek: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = { opaque, offset, whence in
        let fd = descriptor(opaque)
        if whence & Int32(AVSEEK_SIZE) != 0 {
            var st = stat()
            return fstat(fd, &st) == 0 ? Int64(st.st_size) : Int64(hapsync_averror_errno(errno))
        }
        let position = lseek(fd, off_t(offset), whence & ~Int32(AVSEEK_FORCE))
        return position >= 0 ? Int64(position) : Int64(hapsync_averror_errno(errno))
    }
}
