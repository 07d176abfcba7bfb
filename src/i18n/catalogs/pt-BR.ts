import type { Catalog } from '../catalog.ts'

/**
 * Portuguese, Brazilian (português do Brasil).
 * @public loaded by catalogs/index.ts with `require`, which knip does not follow
 */
export const ptBR: Catalog = {
  // The form page
  'page.title_error': 'Erro: {title}',
  'page.submit': 'Enviar resposta',
  'page.asked_by': 'Solicitação de {sender}',
  'page.answer_by': 'Responda até {deadline}',
  'page.closes_in': 'Tempo restante para responder: {duration}.',
  'page.footer':
    'Sua resposta vai apenas para quem enviou este link para você. Este formulário aceita uma única resposta.',
  'page.new_tab': '(abre em uma nova aba)',
  'mark.required': '(obrigatório)',
  'mark.optional': '(opcional)',

  // Errors, as a 422 page shows them
  'summary.title': 'Há um problema',
  'error.prefix': 'Erro:',
  'error.required.text': 'Digite uma resposta',
  'error.required.textarea': 'Digite uma resposta',
  'error.required.email': 'Informe um endereço de e-mail',
  'error.required.number': 'Informe um número',
  'error.required.date': 'Informe uma data',
  'error.required.select': 'Selecione uma opção',
  'error.required.select_multiple': 'Selecione pelo menos uma opção',
  'error.required.file': 'Escolha um arquivo',
  'error.unchecked': 'Marque a caixa para continuar',
  'error.too_short': {
    one: 'Digite pelo menos {count} caractere',
    many: 'Digite pelo menos {count} caracteres',
    other: 'Digite pelo menos {count} caracteres',
  },
  'error.too_long': {
    one: 'Digite no máximo {count} caractere',
    many: 'Digite no máximo {count} caracteres',
    other: 'Digite no máximo {count} caracteres',
  },
  'error.too_long_by': {
    one: '{limit}. Você digitou {count} caractere a mais',
    many: '{limit}. Você digitou {count} caracteres a mais',
    other: '{limit}. Você digitou {count} caracteres a mais',
  },
  'answered.title': 'Formulário já respondido: {title}',
  'error.too_small': 'Informe um número maior ou igual a {min}',
  'error.too_large': 'Informe um número menor ou igual a {max}',
  'error.step': 'Informe um número em intervalos de {step}',
  'error.step_from': 'Informe um número em intervalos de {step}, contando a partir de {min}',
  'error.invalid_format': 'Digite a resposta no formato correto',
  'error.invalid_format.text': 'Digite a resposta em uma única linha',
  'error.invalid_format.number': 'Informe um número, por exemplo: {example}',
  'error.pattern': 'Digite a resposta no formato solicitado',
  'error.email': 'Informe um endereço de e-mail no formato correto, como name@example.com',
  'error.not_an_option': 'Selecione uma das opções',
  'error.not_unique': 'Selecione cada opção só uma vez',
  'error.too_few_selected': {
    one: 'Selecione pelo menos {count} opção',
    many: 'Selecione pelo menos {count} opções',
    other: 'Selecione pelo menos {count} opções',
  },
  'error.too_many_selected': {
    one: 'Selecione no máximo {count} opção',
    many: 'Selecione no máximo {count} opções',
    other: 'Selecione no máximo {count} opções',
  },
  'error.date': 'Informe uma data válida',
  'error.date_too_early': 'Escolha uma data a partir de {date}',
  'error.date_too_late': 'Escolha uma data até {date}',
  'error.file_too_large': 'O arquivo selecionado deve ter no máximo {size}',
  'error.file_type': 'O arquivo selecionado deve ser de um destes tipos: {types}',
  'error.control_character': 'Remova o caractere invisível {character} da sua resposta',
  'error.invalid_encoding': 'Não foi possível ler sua resposta; digite-a novamente',
  'error.invalid_value': 'Informe uma resposta válida',

  // Hints under a label
  'hint.min_length': {
    one: 'Pelo menos {count} caractere.',
    many: 'Pelo menos {count} caracteres.',
    other: 'Pelo menos {count} caracteres.',
  },
  'hint.max_length': {
    one: 'Até {count} caractere.',
    many: 'Até {count} caracteres.',
    other: 'Até {count} caracteres.',
  },
  'hint.length_between': {
    one: 'De {min} a {count} caractere.',
    many: 'De {min} a {count} caracteres.',
    other: 'De {min} a {count} caracteres.',
  },
  'hint.number_between': 'Um número de {min} a {max}.',
  'hint.number_min': 'Um número maior ou igual a {min}.',
  'hint.number_max': 'Um número menor ou igual a {max}.',
  'hint.date_between': 'Uma data de {min} a {max}.',
  'hint.date_min': 'Uma data a partir de {min}.',
  'hint.date_max': 'Uma data até {max}.',
  'hint.date_on': 'Somente o dia {date}.',
  'date.day': 'Dia',
  'date.month': 'Mês',
  'date.year': 'Ano',
  'date.example': 'Por exemplo, {example}',
  'date.missing_day': 'A data precisa incluir o dia',
  'date.missing_month': 'A data precisa incluir o mês',
  'date.missing_year': 'A data precisa incluir o ano',
  'date.missing_day_month': 'A data precisa incluir o dia e o mês',
  'date.missing_day_year': 'A data precisa incluir o dia e o ano',
  'date.missing_month_year': 'A data precisa incluir o mês e o ano',
  'date.not_real': 'Informe uma data que exista',
  'date.year_digits': 'O ano precisa ter 4 dígitos',
  'date.on': 'A data precisa ser {date}',
  'hint.file_size': 'Até {size}.',
  'hint.file_types': 'Tipos de arquivo: {types}. Até {size}.',
  'hint.select_any': 'Selecione todas as opções que se aplicam.',
  'hint.select_at_least': {
    one: 'Selecione pelo menos {count}.',
    many: 'Selecione pelo menos {count}.',
    other: 'Selecione pelo menos {count}.',
  },
  'hint.select_at_most': {
    one: 'Selecione até {count}.',
    many: 'Selecione até {count}.',
    other: 'Selecione até {count}.',
  },
  'hint.select_exactly': { one: 'Selecione {count}.', many: 'Selecione {count}.', other: 'Selecione {count}.' },
  'hint.select_between': 'Selecione de {min} a {max}.',

  // Controls
  'select.placeholder': 'Escolha uma opção',
  'select.no_answer': 'Sem resposta',
  'file.choose': 'Escolher arquivo',
  'file.none': 'Nenhum arquivo escolhido',
  'file.kept':
    'Você já adicionou {name} ({size}). Ele será enviado com sua resposta, a menos que você o remova ou escolha outro arquivo abaixo.',
  'file.remove': 'Remover este arquivo',
  'file.replace': 'Não é preciso escolhê-lo de novo. Para enviar outro arquivo no lugar deste, escolha-o aqui.',
  'file.kind.image': 'imagens',
  'file.kind.audio': 'arquivos de áudio',
  'file.kind.video': 'vídeos',
  'file.kind.text': 'arquivos de texto',

  // After sending
  'receipt.title': 'Resposta enviada: {title}',
  'receipt.heading': 'Sua resposta foi enviada',
  'receipt.default_message': 'Obrigado. Não é preciso fazer mais nada; você já pode fechar esta página.',
  'receipt.sent_at': 'Enviada em {time}.',
  'receipt.what_you_sent': 'O que você enviou',
  'receipt.not_answered': 'Não respondido',
  'receipt.yes': 'Sim',
  'receipt.no': 'Não',
  'receipt.file': '{name} ({size})',
  'answered.heading': 'Este formulário foi respondido',
  'answered.at': 'Ele foi respondido em {time}.',
  'answered.default_message': 'Não é preciso fazer mais nada; você já pode fechar esta página.',

  // Pages for every other outcome
  'status.answered.heading': 'Este formulário já foi respondido',
  'status.answered.message':
    'Um formulário aceita uma única resposta, e este já tem uma. O que você acabou de enviar não foi registrado.',
  'status.cancelled.heading': 'Este formulário foi cancelado',
  'status.cancelled.message': 'Quem o enviou não precisa mais de uma resposta, por isso ele não aceita respostas.',
  'status.expired.heading': 'Este formulário expirou',
  'status.expired.message':
    'O prazo para responder terminou, por isso ele não aceita mais respostas. Se você ainda quiser responder, peça um novo link a quem o enviou.',
  'status.not_found.heading': 'Formulário não encontrado',
  'status.not_found.message':
    'Não há nenhum formulário neste endereço. Verifique se o link está completo; o formulário também pode ter sido excluído.',
  'status.cross_site.heading': 'Resposta recusada',
  'status.cross_site.message':
    'Esta resposta foi enviada de outro site, por isso não foi aceita. Abra o link que você recebeu e responda por ele.',
  'status.rate_limited.heading': 'Muitas tentativas',
  'status.rate_limited.message':
    'Chegaram muitas respostas do seu endereço no último minuto. Aguarde um pouco e tente de novo.',
  'status.too_large.heading': 'Grande demais para enviar',
  'status.too_large.message':
    'O que você enviou é maior do que este formulário aceita. Escolha arquivos menores e tente de novo.',
  'status.too_large.limits': 'O maior arquivo que cada pergunta aceita:',
  'status.too_large.file_limit': '{label}: até {size}',
  'status.too_slow.heading': 'O envio demorou demais',
  'status.too_slow.message':
    'Sua resposta chegou devagar demais e não foi registrada, talvez por causa de uma conexão ruim. Volte ao formulário e envie de novo.',
  'status.busy.heading': 'Serviço ocupado no momento',
  'status.busy.message':
    'O servidor está ocupado demais para receber sua resposta agora, por isso nada foi registrado. Volte ao formulário e envie de novo daqui a pouco.',
  'status.unreadable.heading': 'Resposta não compreendida',
  'status.unreadable.message':
    'O que chegou não pôde ser lido como resposta a este formulário. Volte ao formulário e envie a resposta por ele.',
  'status.error.heading': 'Algo deu errado',
  'status.error.message': 'Sua resposta pode não ter sido registrada. Tente de novo daqui a pouco.',
  'status.retry_after': {
    one: 'Você pode tentar de novo em {count} segundo.',
    many: 'Você pode tentar de novo em {count} segundos.',
    other: 'Você pode tentar de novo em {count} segundos.',
  },
  'status.back': 'Voltar ao formulário',
  'sent.heading': 'O que você enviou',
  'sent.not_recorded': 'Nada do que você enviou foi registrado.',
  'sent.intro': 'Veja abaixo o que você enviou, para guardar uma cópia.',
  'sent.copy_label': 'Suas respostas em texto',
  'sent.copy_hint': 'Selecione todo o texto deste campo e copie.',
  'review.title': 'Confira suas respostas – {title}',
  'review.heading': 'Confira suas respostas antes de enviar',
  'review.change': 'Alterar',
  'review.continue': 'Continuar',
  'review.send_heading': 'Agora envie sua resposta',
  'review.send_text': 'Depois de enviada, sua resposta não poderá ser alterada.',
  'review.lapsed':
    'Suas respostas não foram enviadas. As respostas aguardando conferência ficam guardadas por 1 hora, e esse tempo já passou. Preencha o formulário novamente.',
  'review.lapsed_kept':
    'Suas respostas não foram enviadas. As respostas aguardando conferência ficam guardadas por 1 hora, e esse tempo já passou. Suas respostas estão preenchidas abaixo: adicione de novo os arquivos, se houver, e continue.',
}
