# expect: no fusion definition found
# expect-line: 7


   
# nothing else here
