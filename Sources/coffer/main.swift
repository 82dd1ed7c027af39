import CofferCLI

CofferCLI.run()
