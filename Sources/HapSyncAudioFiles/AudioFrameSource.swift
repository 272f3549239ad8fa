import CSndFile
import Foundation
import HapSyncAHAP

/// Decoded frames of one open audio file, read in order: the decoder's view of a C library.
/// Control side only (load time); not for the real-time path.
protocol AudioFrameSource: AnyObject {
    /// Channels per frame.
    var channels: Int { get }
    /// Frames per second of what `read` returns.
    var sampleRate: Int { get }
    /// Reads up to `frames` interleaved float frames into `buffer` (room for `frames × channels`
    /// samples); returns how many were read, 0 at the end of the audio.
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileDecoder.LoadError) -> Int
}

extension AudioFileDecoder {
    /// The library that decodes what a header describes: FFmpeg for AAC and ALAC and for the MP4
    /// container (which libsndfile 1.2 does not read), libsndfile for the rest (WAV, AIFF, CAF
    /// PCM, A-law, µ-law, FLAC, MP3). Opens on `file`, positioned at its start.
    static func openSource(_ file: FileHandle, info: AudioFileInfo, path: String) throws(AudioFileDecoder.LoadError) -> any AudioFrameSource {
        if info.format == .mp4 || info.encoding == .aac || info.encoding == .alac {
            return try FFmpegSource(file, info: info, path: path)
        }
        return try SndFileSource(file, path: path)
    }
}

/// libsndfile reading an already open (regular, checked) file by its descriptor.
final class SndFileSource: AudioFrameSource {
    let channels: Int
    let sampleRate: Int
    private let file: FileHandle
    private let handle: OpaquePointer
    private let path: String

    init(_ file: FileHandle, path: String) throws(AudioFileDecoder.LoadError) {
        var info = SF_INFO()
        // close_desc 0: the FileHandle owns the descriptor and outlives the SNDFILE.
        guard let handle = sf_open_fd(file.fileDescriptor, Int32(SFM_READ), &info, 0) else {
            throw .unreadable(path: path, reason: String(cString: sf_strerror(nil)))
        }
        self.file = file
        self.handle = handle
        self.path = path
        channels = Int(info.channels)
        sampleRate = Int(info.samplerate)
    }

    deinit { sf_close(handle) }

    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(AudioFileDecoder.LoadError) -> Int {
        let n = sf_readf_float(handle, buffer, sf_count_t(frames))
        guard sf_error(handle) == SF_ERR_NO_ERROR else { throw .unreadable(path: path, reason: String(cString: sf_strerror(handle))) }
        return Int(max(0, n))
    }
}
