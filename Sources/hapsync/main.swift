import HapSyncCLI
import Foundation
exit(HapSyncCLI.main(Array(CommandLine.arguments.dropFirst())))
